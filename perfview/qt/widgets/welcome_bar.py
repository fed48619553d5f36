"""The first start's welcome: what the open example is, and what to do next.

A bare start opens the bundled example profile, so the window shows something real; without a
word it read as the user's own file, or as a demo with no way out. The bar says what the
example is and offers the four ways in: open a file, open a folder (per-rank traces, a log
directory), record a script, the recorded examples. It goes when dismissed or when the
user's own file is opened.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMenu, QPushButton, QToolButton, QWidget

EXAMPLE_TEXT = (
    "<b>Welcome to perfview.</b> This is the bundled example: a cProfile run of a small "
    "program (<code>example_program.py</code>: records made, parsed and summarised). "
    "Open your own profile, or try another:"
)


class WelcomeBar(QFrame):
    """The example's caption and the buttons that lead away from it."""

    def __init__(
        self,
        *,
        open_file: Callable[[], object],
        open_folder: Callable[[], object],
        record: Callable[[], object],
        examples: QMenu | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("WelcomeBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(EXAMPLE_TEXT, self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        row.addWidget(self.label, 1)
        self.buttons: dict[str, QPushButton] = {}
        for key, text, slot, tip in (
            ("open", "Open file…", open_file, "A profile, trace or memory file (Ctrl+O)"),
            ("folder", "Open folder…", open_folder, "Per-rank traces or a profile log directory"),
            ("record", "Record a script…", record, "Run a Python script under a profiler"),
        ):
            button = QPushButton(text, self)
            button.setToolTip(tip)
            button.clicked.connect(lambda _checked=False, fn=slot: fn())
            row.addWidget(button)
            self.buttons[key] = button
        if examples is not None:
            button = QPushButton("Examples", self)
            button.setToolTip("The bundled PyTorch demos, slow and fixed forms (Help ▸ Examples)")
            button.setMenu(examples)
            row.addWidget(button)
            self.buttons["examples"] = button
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Hide this message")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        row.addWidget(close)
        self.hide()


__all__ = ["EXAMPLE_TEXT", "WelcomeBar"]
