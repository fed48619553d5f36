"""Main window: every real sample opens, errors are reported, loading is cancellable,
settings persist, views switch, drag and drop, and the --screenshot entry point."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QLabel

from perfview.qt.document_tab import DocumentTab
from perfview.qt.file_types import example_path, name_filters
from perfview.qt.main_window import MainWindow
from perfview.qt.settings import MAX_RECENT, Settings
from perfview.qt.tasks import Task
from tests.conftest import sample

pytestmark = pytest.mark.gui
LOAD_TIMEOUT_MS = 60_000

# Every loadable sample in ../shared/samples (see SOURCES.md).
SAMPLES = [
    "kineto_gpu/hta_sampled_rank-0.json.gz",
    "kineto_gpu/hta_sampled_rank-1.json.gz",
    "kineto_gpu/hta_nccl_data.json.gz",
    "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz",
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "kineto_gpu/zoology_trace.json",
    "kineto_cpu/dtu_jc_resnet18_cpu_trace.json",
    "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json",
    "kineto_cpu/hta_cpu_only_rank-34.pt.trace.json.gz",
    "chrome_trace/catapult_simple_trace.json",
    "chrome_trace/catapult_flow.json",
    "chrome_trace/devtools_trace_chrome116.json",
    "chrome_trace/devtools_timeline_chrome65_array.json",
    "pstats/gprof2dot_print1.pstats",
    "pstats/gprof2dot_memtrail.pstats",
    "pstats/hypothesis_csv_combined.prof",
    "pstats/dtu_gabriellanaro_output.prof",
    "mprof_dat/ctrml_mprofile.dat",
    "mprof_dat/montepython_mprofile_20240116233958.dat",
    "mprof_dat/seqsharp_mprof_children.dat",
    "memprof_text/titanic_memory_profile.txt",
    "memprof_text/axelrod_memory_profiler.log",
]
# Files perfview must refuse with a message (the other odd/ files load best-effort).
REFUSED = ["odd/gprof2dot_py2_cProfile.pstats"]
# Samples whose every view is built (all formats and view kinds, kept few for speed).
ALL_VIEWS = {
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json",
    "chrome_trace/catapult_simple_trace.json",
    "pstats/hypothesis_csv_combined.prof",
    "mprof_dat/seqsharp_mprof_children.dat",
    "memprof_text/titanic_memory_profile.txt",
}


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    path = tmp_path / "settings.ini"
    monkeypatch.setenv("PERFVIEW_SETTINGS", str(path))
    return Settings(QSettings(str(path), QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot: object, settings: Settings) -> MainWindow:
    win = MainWindow(settings)
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    win.show()
    return win


def open_and_wait(qtbot: object, window: MainWindow, path: Path) -> DocumentTab:
    with qtbot.waitSignal(window.document_opened, timeout=LOAD_TIMEOUT_MS) as blocker:  # type: ignore[attr-defined]
        window.open_path(path)
    tab = blocker.args[0]
    assert isinstance(tab, DocumentTab)
    return tab


def _broken_views(tab: DocumentTab, names: list[str]) -> list[str]:
    broken = []
    for name in names:
        widget = tab.view_widget(name)
        assert widget is not None
        if isinstance(widget, QLabel) and widget.text().startswith("This view could not be built"):
            broken.append(f"{name}: {widget.text()}")
    return broken


@pytest.mark.parametrize("rel", SAMPLES)
def test_every_sample_opens(qtbot: object, window: MainWindow, rel: str) -> None:
    path = sample(rel)
    tab = open_and_wait(qtbot, window, path)
    assert window.tabs_controller.current_tab() is tab
    assert window.tabs.count() == 1
    assert tab.view_names(), "a loaded file must offer at least one view"
    assert tab.current_view() == tab.view_names()[0]
    names = tab.view_names() if rel in ALL_VIEWS else [tab.view_names()[0]]
    assert _broken_views(tab, names) == []
    assert not window.error_bar.isVisible()
    fmt = tab.document.bundle.format
    timeline = tab.document.bundle.timeline
    torch_trace = timeline is not None and timeline.is_torch
    expected_first = {
        "pstats": "icicle",
        "trace": "overview" if torch_trace else "timeline",
        "mprof": "memory",
    }
    assert tab.view_names()[0] == expected_first.get(fmt, "lines")


def test_view_sets_per_format(qtbot: object, window: MainWindow) -> None:
    tab = open_and_wait(qtbot, window, example_path())
    assert tab.view_names() == [
        "icicle", "bottom-up", "sandwich", "functions", "callers", "tree", "query"
    ]  # fmt: skip
    trace = open_and_wait(qtbot, window, sample("kineto_gpu/hta_mi250_rocm6.2.json.gz"))
    names = trace.view_names()
    assert names[:3] == ["overview", "timeline", "operators"]  # torch traces open on Overview
    assert {"ops", "kernels", "lanes"} <= set(names)
    cpu = open_and_wait(qtbot, window, sample("kineto_cpu/dtu_jc_resnet18_cpu_trace.json"))
    assert "kernels" not in cpu.view_names()  # no kernel events, no Kernels tab
    assert "memory" not in cpu.view_names()  # no [memory] events
    mem = open_and_wait(qtbot, window, sample("kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"))
    assert "memory" in mem.view_names()
    assert window.tabs.count() == 4


def test_unloadable_file_shows_error_and_window_stays_usable(
    qtbot: object, window: MainWindow
) -> None:
    for rel in REFUSED:
        path = sample(rel)
        with qtbot.waitSignal(window.load_failed, timeout=LOAD_TIMEOUT_MS) as blocker:  # type: ignore[attr-defined]
            window.open_path(path)
        failed_path, message = blocker.args
        assert failed_path == str(path)
        assert message
        assert window.error_bar.isVisible()
        assert f"cannot open {path}" in window.error_bar.label.text()
        assert window.tabs.count() == 0
    missing = Path(window.settings.last_folder()) / "no-such-file.prof"
    with qtbot.waitSignal(window.load_failed, timeout=LOAD_TIMEOUT_MS):  # type: ignore[attr-defined]
        window.open_path(missing)
    assert "does not exist" in window.error_bar.label.text()
    # still usable: the next file opens
    tab = open_and_wait(qtbot, window, example_path())
    assert window.tabs.count() == 1
    assert tab.document.bundle.format == "pstats"
    qtbot.waitUntil(lambda: not window.status_controller.is_loading(), timeout=5000)  # type: ignore[attr-defined]


def test_cancel_raises_load_cancelled_inside_progress(qtbot: object) -> None:
    started = threading.Event()
    calls: list[float] = []

    def endless(progress: object) -> None:
        started.set()
        while True:
            calls.append(1.0)
            progress(0.5, "working")  # type: ignore[operator]

    task = Task(endless)
    # Connect every waiter before the worker runs: no connect/disconnect races its emits.
    with qtbot.waitSignals([task.cancelled, task.done], timeout=10_000):  # type: ignore[attr-defined]
        task.start()
        assert started.wait(10)
        task.cancel()
    assert not task.is_running
    assert calls


def test_window_cancel_button_cancels_load(qtbot: object, window: MainWindow) -> None:
    path = sample("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    task = window.open_path(path)
    assert task is not None
    assert window.status_controller.cancel_button.isVisibleTo(window)
    with qtbot.waitSignal(task.done, timeout=LOAD_TIMEOUT_MS):  # type: ignore[attr-defined]
        # before the worker's first progress report → cancelled
        window.status_controller.cancel_button.click()
    qtbot.waitUntil(lambda: not window.status_controller.is_loading(), timeout=5000)  # type: ignore[attr-defined]
    assert not window.status_controller.cancel_button.isVisibleTo(window)
    assert window.tabs.count() in (0, 1)  # 1 only if the load won the race


def test_failing_task_reports_unexpected_error(qtbot: object) -> None:
    def broken(progress: object) -> None:
        raise ZeroDivisionError("boom")

    task = Task(broken)
    with qtbot.waitSignal(task.failed, timeout=10_000) as blocker:  # type: ignore[attr-defined]
        task.start()
    assert blocker.args == ["unexpected error: ZeroDivisionError: boom"]
    assert "ZeroDivisionError" in task.traceback


def test_recent_files_and_last_folder_persist(
    qtbot: object, window: MainWindow, settings: Settings, tmp_path: Path
) -> None:
    path = sample("pstats/gprof2dot_print1.pstats")
    open_and_wait(qtbot, window, path)
    assert settings.recent_files()[0] == str(path.resolve())
    assert settings.last_folder() == str(path.parent)
    window.menus_controller.fill_recent_menu()
    texts = [a.text() for a in window.menus_controller.recent_menu.actions()]
    assert any(path.name in t for t in texts)
    for i in range(MAX_RECENT + 3):
        settings.add_recent(tmp_path / f"f{i}.prof")
    files = settings.recent_files()
    assert len(files) == MAX_RECENT
    assert files[0].endswith(f"f{MAX_RECENT + 2}.prof")
    # a fresh Settings over the same file sees the same list
    again = Settings(QSettings(settings.store.fileName(), QSettings.Format.IniFormat))
    assert again.recent_files() == files


def test_geometry_saved_on_close(qtbot: object, settings: Settings) -> None:
    win = MainWindow(settings)
    qtbot.addWidget(win)  # type: ignore[attr-defined]
    win.resize(640, 480)
    win.show()
    size = (win.width(), win.height())  # may exceed the request: the window's minimum size
    win.close()
    assert settings.geometry("main") is not None
    restored = MainWindow(settings)
    qtbot.addWidget(restored)  # type: ignore[attr-defined]
    assert (restored.width(), restored.height()) == size


def test_view_menu_switches_views(qtbot: object, window: MainWindow) -> None:
    tab = open_and_wait(qtbot, window, example_path())
    titles = [a.text() for a in window.menus_controller.view_menu.actions() if a.isCheckable()]
    assert titles == [
        "Icicle", "Bottom-up", "Sandwich", "Functions", "Callers/Callees", "Call tree", "Query"
    ]  # fmt: skip
    functions = next(
        a for a in window.menus_controller.view_menu.actions() if a.text() == "Functions"
    )
    functions.trigger()
    assert tab.current_view() == "functions"
    assert functions.isChecked()
    window.commands.next_view()
    assert tab.current_view() == "callers"
    assert window.commands.show_view("tree")
    assert not window.commands.show_view("timeline")  # a pstats tab has no timeline
    copied = window.commands.copy_current_table()
    assert copied == ""  # the call tree is not a table
    window.commands.show_view("functions")
    assert window.commands.copy_current_table().startswith("ncalls,tottime_ns")


def test_close_tab_and_reopen_same_file(qtbot: object, window: MainWindow) -> None:
    tab = open_and_wait(qtbot, window, example_path())
    again = open_and_wait(qtbot, window, example_path())
    assert again is tab
    assert window.tabs.count() == 1
    window.tabs_controller.close_current()
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.welcome


def test_drop_files_opens_them(qtbot: object, window: MainWindow) -> None:
    path = sample("memprof_text/axelrod_memory_profiler.log")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(QPoint(10, 10)),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(window.document_opened, timeout=LOAD_TIMEOUT_MS) as blocker:  # type: ignore[attr-defined]
        window.dropEvent(event)
    assert blocker.args[0].document.path == path


def test_load_warnings_show_in_info_bar(qtbot: object, window: MainWindow) -> None:
    tab = open_and_wait(qtbot, window, sample("chrome_trace/catapult_flow.json"))
    warnings = tab.document.bundle.warnings
    assert tab.info_bar.isVisibleTo(tab) == bool(warnings)
    if warnings:
        assert warnings[0] in tab.info_bar.label.text()
        assert tab.info_bar.details_button.isVisibleTo(tab)


def test_name_filters_cover_every_loader() -> None:
    filters = name_filters()
    assert filters[0].startswith("All supported files (")
    assert filters[-1] == "All files (*)"
    for pattern in ("*.prof", "*.json", "*.dat"):
        assert pattern in filters[0]


def test_screenshot_entry_point(qtbot: object, tmp_path: Path) -> None:
    from perfview.qt.app import main

    out = tmp_path / "shot.png"
    assert main(["--screenshot", str(out), "--view", "functions", str(example_path())]) == 0
    assert out.stat().st_size > 10_000
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert (image.width(), image.height()) == (1400, 900)
    missing = tmp_path / "missing.prof"
    assert main(["--screenshot", str(tmp_path / "x.png"), str(missing)]) == 2
    assert not (tmp_path / "x.png").exists()
    assert (
        main(["--screenshot", str(tmp_path / "y.png"), "--view", "nope", str(example_path())]) == 2
    )


def test_screenshot_of_a_folder_shows_its_runs_or_says_why_not(
    qtbot: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder opens as a run browser (or a Job tab): its picture, or one sentence and 2."""
    from perfview.qt.app import main

    (tmp_path / "job").mkdir()
    assert main(["--screenshot", str(tmp_path / "z.png"), str(tmp_path / "job")]) == 2
    assert not (tmp_path / "z.png").exists()
    assert "holds no .json / .json.gz trace files" in capsys.readouterr().err
    logdir = Path(__file__).resolve().parents[1] / "data" / "tb_logdir"
    assert main(["--screenshot", str(tmp_path / "runs.png"), str(logdir)]) == 0
    assert (tmp_path / "runs.png").stat().st_size > 0


def test_shortcuts_are_unique_and_standard(window: MainWindow) -> None:
    from perfview.qt.actions import check_unique_shortcuts

    assert check_unique_shortcuts() == []
    keys = {k: a.shortcut().toString() for k, a in window.menus_controller.actions_by_id.items()}
    assert keys["open"] == "Ctrl+O"
    assert keys["close"] == "Ctrl+W"
    assert keys["quit"] == "Ctrl+Q"


def test_excepthook_shows_dialog_and_keeps_running(
    qtbot: object, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from PySide6.QtWidgets import QMessageBox

    from perfview.qt.app import install_excepthook

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    install_excepthook(window)
    try:
        raise ValueError("a bug in a view")
    except ValueError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1
    assert "ValueError: a bug in a view" in boxes[0].text()
    assert "Traceback" in boxes[0].detailedText()
    boxes[0].close()
    tab = open_and_wait(qtbot, window, example_path())  # still working
    assert tab.document.bundle.format == "pstats"


def test_ops_row_selects_op_in_document(qtbot: object, window: MainWindow) -> None:
    tab = open_and_wait(qtbot, window, sample("kineto_cpu/dtu_jc_resnet18_cpu_trace.json"))
    assert tab.show_view("ops")
    view = tab.view_widget("ops")
    table = tab.document.table("ops")
    with qtbot.waitSignal(tab.document.selection_changed, timeout=2000) as blocker:  # type: ignore[attr-defined]
        view.table.selectRow(0)
    assert blocker.args[0].kind == "op"
    assert blocker.args[0].name == str(table["name"].iat[0])
    # Ctrl+C on the table copies the selected row as CSV
    from PySide6.QtGui import QGuiApplication

    view.table.setFocus()
    qtbot.keyClick(view.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)  # type: ignore[attr-defined]
    text = QGuiApplication.clipboard().text()
    assert text.splitlines()[0].startswith("name,")
    assert text.splitlines()[1].startswith(str(table["name"].iat[0]))


def test_the_window_gives_the_gui_thread_the_gil_back_sooner(qtbot: object) -> None:
    """A worker running Python keeps the GIL at most the switch interval each time the GUI
    thread asks for it: the window shortens it (never lengthens a shorter one)."""
    import sys

    from perfview.qt import main_window

    was = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        window = MainWindow(Settings.ephemeral())
        qtbot.addWidget(window)  # type: ignore[attr-defined]
        assert sys.getswitchinterval() == pytest.approx(main_window.GUI_SWITCH_INTERVAL_S)
        sys.setswitchinterval(0.0005)
        other = MainWindow(Settings.ephemeral())
        qtbot.addWidget(other)  # type: ignore[attr-defined]
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    finally:
        sys.setswitchinterval(was)
