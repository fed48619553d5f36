"""Start-up of `perfview FILE` (issue 20): the CLI decides on the window without importing the
headless machinery, a bare window is painted before the heavy imports, the real window takes
its place and draws the file's first page, other pages still build when selected, and the
start-up probe's stamps come in order."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication

from perfview import cli, startup_stamps
from perfview.qt import app as app_module
from perfview.qt.document_tab import DocumentTab
from perfview.qt.file_types import example_path
from perfview.qt.main_window import MainWindow
from perfview.qt.start_window import StartWindow

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[2]


def test_the_cli_opens_the_window_without_pandas() -> None:
    """`perfview FILE` reaches the Qt import with no pandas/numpy loaded: those follow the
    bare window. A subprocess, since this test process has imported everything already."""
    code = (
        "import sys; from perfview import cli\n"
        "assert cli.opens_window(['x.prof']) and not cli.opens_window(['summary', 'x'])\n"
        "heavy = sorted(m for m in ('pandas', 'numpy', 'PySide6') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_commands_match_the_parser() -> None:
    """The static list the window decision uses is exactly the parser's subcommands."""
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(cli.COMMANDS) == set(subparsers.choices)


def test_start_window_paints_then_hands_over(qtbot) -> None:
    """The start window is painted by `show_now`; `_start_window` then shows the main window
    with the file opening in it and closes the bare one."""
    QApplication.instance()
    args = argparse.Namespace(files=[str(example_path())], compare=None, new_window=True)
    starts_before = {w for w in QApplication.topLevelWidgets() if isinstance(w, StartWindow)}
    window, server = app_module._start_window(args)
    assert server is None
    assert isinstance(window, MainWindow)
    qtbot.addWidget(window)
    starts = [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, StartWindow) and w not in starts_before
    ]
    assert all(not w.isVisible() for w in starts)
    assert window.isVisible()
    qtbot.waitUntil(lambda: window.tabs_controller.current_tab() is not None, timeout=30_000)
    tab = window.tabs_controller.current_tab()
    assert isinstance(tab, DocumentTab)
    assert tab.current_view() == "icicle"
    assert tab.view_widget("icicle") is not None
    # pages other than the first are built when selected, not before
    assert "functions" not in tab._views
    tab.tabs.setCurrentIndex(tab.view_names().index("functions"))
    qtbot.waitUntil(
        lambda: "functions" in tab._views and tab._views["functions"].isVisible(), timeout=30_000
    )
    window.close()


def test_start_window_is_painted_by_show_now(qtbot) -> None:
    start = StartWindow(["a.prof"], app_module.Settings.ephemeral())
    qtbot.addWidget(start)
    assert "a.prof" in start.label.text()
    start.show_now(timeout_ms=5000)
    assert start.painted


def test_probe_stamps_come_in_order(qtbot, tmp_path: Path, monkeypatch) -> None:
    """With PERFVIEW_STARTUP_PROBE set, the window writes window_shown, then loaded,
    tab_built and first_page_drawn (wall clock and CPU seconds on each line)."""
    stamps = tmp_path / "stamps.txt"
    monkeypatch.setenv(startup_stamps.ENV, str(stamps))
    monkeypatch.setattr(startup_stamps, "_seen", set())
    args = argparse.Namespace(files=[str(example_path())], compare=None, new_window=True)
    window, _server = app_module._start_window(args)
    qtbot.addWidget(window)

    def drawn() -> bool:
        return stamps.exists() and "first_page_drawn" in stamps.read_text()

    qtbot.waitUntil(drawn, timeout=30_000)
    lines = [line.split() for line in stamps.read_text().splitlines()]
    names = [line[0] for line in lines]
    assert names.index("window_shown") < names.index("loaded") < names.index("first_page_drawn")
    times = [float(line[1]) for line in lines]
    assert times == sorted(times)
    assert all(len(line) == 3 for line in lines)
    window.close()


def test_status_bar_says_while_the_scanner_compiles(qtbot, monkeypatch) -> None:
    """While the start-up warm-up's child compiles the trace scanner (faked: a real compile
    takes 15 s), the status bar says so; the label goes once the compile is over."""
    from perfview.loaders import service
    from perfview.qt import warmup

    window = MainWindow(app_module.Settings.ephemeral(), warm=False)
    qtbot.addWidget(window)
    window.show()
    state = {"compiling": True}
    monkeypatch.setattr(service, "compiling", lambda: state["compiling"])
    monkeypatch.setattr(service, "_compiling_what", ("the trace scanner",))  # what it started
    monkeypatch.setattr(warmup, "scanner_settled", lambda: True)
    timer = window.status_controller.watch_compile(interval_ms=10)
    qtbot.waitUntil(window.status_controller.compile_label.isVisible, timeout=5000)
    assert "compiling the trace scanner" in window.status_controller.compile_label.text().lower()
    state["compiling"] = False
    qtbot.waitUntil(lambda: not window.status_controller.compile_label.isVisible(), timeout=5000)
    qtbot.waitUntil(lambda: not timer.isActive(), timeout=5000)


def test_a_trace_tab_builds_its_call_tree_when_a_tree_page_is_shown(qtbot) -> None:
    """The load leaves a trace's call tree (a second at 1 GB) to the first page drawn from
    it: the tab opens without it, and the Icicle prepares it in the background when clicked."""
    from tests.conftest import sample

    path = sample("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    window = MainWindow(app_module.Settings.ephemeral())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.document_opened, timeout=60_000) as opened:
        window.open_path(path, remember=False)
    tab = opened.args[0]
    assert tab.current_view() != "icicle"
    assert tab.document.bundle.tree is None
    tab.tabs.setCurrentIndex(tab.view_names().index("icicle"))
    assert tab.is_preparing("icicle")
    qtbot.waitUntil(lambda: "icicle" in tab._views, timeout=60_000)
    assert tab.document.bundle.tree is not None
    assert tab.document.tree() is tab.document.bundle.tree
    assert type(tab._views["icicle"]).__name__ == "IcicleView"
    window.close()


def test_the_overview_is_drawn_first_and_its_findings_follow(qtbot) -> None:
    """A torch trace's tab opens on its Overview before the recommendations are found; a
    worker finds them and the page shows them (`deferred.flush` waits, for screenshots)."""
    from perfview.qt import deferred
    from tests.conftest import sample

    path = sample("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    window = MainWindow(app_module.Settings.ephemeral())
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.document_opened, timeout=60_000) as opened:
        window.open_path(path, remember=False)
    tab = opened.args[0]
    assert tab.current_view() == "overview"
    view = tab._views["overview"]
    deferred.flush(30_000)
    assert view.findings is not None
    assert view.findings.cards
    assert tab.tab_data.data["recommendations"] is view.data.findings
    assert tab.tab_data.data["overview"] is view.data
    window.close()
