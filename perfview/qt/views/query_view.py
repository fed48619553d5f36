"""The Query page: SQL (DuckDB) over the document's tables, run off the GUI thread.

The editor's text goes to `core.query.QuerySession.run` in a `Task`; the session (DuckDB's
import and the table registration, about half a second) is opened by the first run, in the
worker too, and kept for the next runs. Stop calls DuckDB's `interrupt()`, which ends the query
in flight from the GUI thread; the worker then reports DuckDB's "interrupted" message like any
failed query. Without DuckDB the page says in one sentence how to install it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from perfview.core.analysis import query
from perfview.core.analysis.query_examples import examples_for
from perfview.core.model import Bundle
from perfview.core.model.units import format_ns
from perfview.qt.tasks import Task

DEFAULT_SQL = "SELECT name, count(*) AS calls, sum(dur) AS total_ns\nFROM slices\nGROUP BY 1\n"
DEFAULT_SQL += "ORDER BY total_ns DESC\nLIMIT 50"
MAX_ROWS = 200_000  # rows shown; a `SELECT * FROM slices` on a big trace is cut here


def default_sql(tables: list[str]) -> str:
    if "slices" in tables:
        return DEFAULT_SQL
    first = tables[0] if tables else "functions"
    return f"SELECT * FROM {first} LIMIT 100"


class _Sessions:
    """The page's one session, created on a worker thread and used from workers after that;
    the lock makes "create once" hold when two runs overlap (they do not, Run is disabled)."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.session: query.QuerySession | None = None
        self._lock = threading.Lock()

    def get(self) -> query.QuerySession:
        with self._lock:
            if self.session is None:
                self.session = query.QuerySession(self.bundle)
            return self.session

    def interrupt(self) -> None:
        session = self.session
        if session is not None:
            session.interrupt()


class QueryView(QWidget):
    """Editor, Run/Stop, Examples menu, status line and the result table."""

    def __init__(self, bundle: Bundle, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tables = query.table_names(bundle)
        self.task: Task | None = None
        self.result: pd.DataFrame | None = None
        self._sessions = _Sessions(bundle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        if not query.available():
            hint = QLabel(query.INSTALL_HINT + ".", self)
            hint.setWordWrap(True)
            layout.addWidget(hint)
            layout.addStretch(1)
            self.editor = None
            return
        self.editor = QPlainTextEdit(self)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        self.editor.setFont(font)
        self.editor.setPlainText(default_sql(self.tables))
        self.run_button = QPushButton("Run", self)
        self.run_button.setToolTip("Run the query (Ctrl+Enter)")
        self.run_button.clicked.connect(self.run_query)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.examples_button = QToolButton(self)
        self.examples_button.setText("Examples")
        self.examples_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.examples_button.setMenu(self._examples_menu())
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        tables = QLabel("Tables: " + ", ".join(self.tables), self)
        tables.setToolTip(_schema_text(self.tables))
        bar = QHBoxLayout()
        for widget in (self.run_button, self.stop_button, self.examples_button):
            bar.addWidget(widget)
        bar.addWidget(tables, 1)
        self.result_box = QWidget(self)
        QVBoxLayout(self.result_box).setContentsMargins(0, 0, 0, 0)
        self.result_view: QWidget | None = None
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(bar)
        top_layout.addWidget(self.editor, 1)
        top_layout.addWidget(self.status)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(top)
        splitter.addWidget(self.result_box)
        splitter.setSizes([300, 700])
        layout.addWidget(splitter)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self).activated.connect(self.run_query)

    def _examples_menu(self) -> QMenu:
        menu = QMenu(self)
        for example in examples_for(self.tables):
            action = QAction(example.title, menu)
            action.triggered.connect(lambda _=False, sql=example.sql: self.set_sql(sql))
            menu.addAction(action)
        return menu

    def set_sql(self, sql: str) -> None:
        if self.editor is not None:
            self.editor.setPlainText(sql)

    def is_running(self) -> bool:
        return self.task is not None

    def run_query(self) -> Task | None:
        """Start the editor's query in a worker; returns its Task (None if one is running)."""
        if self.editor is None or self.task is not None:
            return None
        sql = self.editor.toPlainText().strip()
        if not sql:
            return None
        sessions = self._sessions
        task = Task(lambda _progress: _timed(sessions, sql), name="query")
        task.finished.connect(self._on_result)
        task.failed.connect(self._on_failed)
        task.cancelled.connect(lambda: self.status.setText("Stopped."))
        task.done.connect(self._on_done)
        self.task = task
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.status.setText("Running…")
        task.start()
        return task

    def stop(self) -> None:
        """Interrupt the running query (DuckDB stops it; the worker reports the failure)."""
        if self.task is not None:
            self._sessions.interrupt()
            self.task.cancel()

    def _on_result(self, result: Any) -> None:
        from perfview.qt.views.table_view import TableView

        frame, seconds = result
        total = len(frame)
        shown = frame.head(MAX_ROWS) if total > MAX_ROWS else frame
        self.result = frame
        if self.result_view is not None:
            self.result_view.hide()
            self.result_view.deleteLater()
        self.result_view = TableView(shown.reset_index(drop=True), None, parent=self.result_box)
        layout = self.result_box.layout()
        assert layout is not None
        layout.addWidget(self.result_view)
        more = f" (the first {MAX_ROWS:,} shown)" if total > MAX_ROWS else ""
        rows = f"{total:,} row{'s' if total != 1 else ''}"
        self.status.setText(f"{rows}{more} in {format_ns(seconds * 1e9)}")

    def _on_failed(self, message: str) -> None:
        self.status.setText(f"Query failed: {message}")

    def _on_done(self) -> None:
        self.task = None
        self.run_button.setEnabled(True)
        self.stop_button.setEnabled(False)


def _timed(sessions: _Sessions, sql: str) -> tuple[pd.DataFrame, float]:
    """Run on the worker: the result and how long the query took (session opening excluded)."""
    session = sessions.get()
    start = time.perf_counter()
    frame = session.run(sql)
    return frame, time.perf_counter() - start


def _schema_text(tables: list[str]) -> str:
    lines = []
    for name in tables:
        doc = query.TABLES.get(name)
        if doc is not None:
            lines.append(f"{name}: {', '.join(c for c, _ in doc.columns)}")
    return "\n".join(lines)


__all__ = ["QueryView", "default_sql"]
