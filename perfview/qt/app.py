"""Application entry: `main(argv)` sets up QApplication and the main window.

    perfview [FILE ...] [--new-window]
    perfview --compare A B            (a compare tab: A = baseline, B = new)
    perfview --screenshot OUT.png [--view VIEW] [--size WxH] FILE

`argv` holds the arguments *after* the program name (as `perfview.cli` passes them). Unknown
options starting with `-` are handed to Qt (e.g. `-platform offscreen`).
With no FILE the bundled example profile opens, so a first start shows something real.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from perfview import __version__, preload, startup_gc, startup_stamps
from perfview.qt import pyside_features
from perfview.qt.settings import APPLICATION, ORGANIZATION, Settings

ICON = Path(__file__).resolve().parent.parent / "resources" / "icons" / "perfview.svg"


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="perfview", description="perfview profile viewer")
    parser.add_argument("files", nargs="*", metavar="FILE", help="files to open")
    parser.add_argument(
        "--screenshot",
        metavar="OUT.png",
        help="save a picture of FILE and exit (PNG; SVG with vector shapes when OUT ends in .svg)",
    )
    parser.add_argument("--view", help="view to show with --screenshot (default: the first)")
    parser.add_argument("--size", default="1400x900", help="window size for --screenshot (WxH)")
    parser.add_argument(
        "--new-window", action="store_true", help="do not hand files to a running perfview"
    )
    parser.add_argument(
        "--compare", nargs=2, metavar=("A", "B"), help="compare run B against baseline A"
    )
    parser.add_argument("--version", action="version", version=f"perfview {__version__}")
    return parser.parse_known_args(argv)


def make_app(qt_args: list[str] | None = None) -> QApplication:
    """The QApplication (reused if one exists, e.g. under pytest-qt), named for QSettings."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([sys.argv[0] if sys.argv else "perfview", *(qt_args or [])])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("perfview")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("perfview")
    if ICON.exists():
        app.setWindowIcon(QIcon(str(ICON)))
    return app


def install_excepthook(parent: QWidget | None) -> None:
    """Show unexpected exceptions in a (non-blocking) dialog and keep running.

    Qt calls Python slots from C++; an exception escaping a slot would otherwise only print, or
    with some PySide versions abort. A bug in one view must not cost the user the whole session.
    """
    boxes: list[QMessageBox] = []

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(text)
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        from perfview.qt import crash_log

        logged = crash_log.record(text)  # before any Qt call that could fail in turn
        box = crash_log.error_box(parent, f"{kind.__name__}: {value}", text, logged)
        box.finished.connect(lambda _r, b=box: boxes.remove(b) if b in boxes else None)
        boxes.append(box)
        box.open()

    sys.excepthook = hook


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x", 1))
    except ValueError:
        return 1400, 900
    return max(width, 320), max(height, 240)


def _forward_to_running(files: list[str]) -> bool:
    """Hand files to an already running perfview (single instance); True if one took them."""
    try:
        from perfview.qt import single_instance
    except ImportError:
        return False
    return bool(single_instance.forward_to_running([str(Path(f).resolve()) for f in files]))


def _serve_instance(window: QWidget) -> object | None:
    """Listen for later launches and open what they send in `window`."""
    try:
        from perfview.qt import single_instance
    except ImportError:
        return None
    server = single_instance.InstanceServer(parent=window)
    if not server.start():
        return None
    server.files_received.connect(window.open_paths)  # type: ignore[attr-defined]
    server.files_received.connect(lambda _paths: single_instance.raise_window(window))
    server.raise_requested.connect(lambda: single_instance.raise_window(window))
    from perfview.qt import assistant_link  # `perfview mcp --window`

    assistant_link.attach(window, server)  # type: ignore[arg-type]  # the MainWindow
    app = QApplication.instance()
    if app is not None:
        single_instance.install_file_open_handler(app, window.open_paths)  # type: ignore[attr-defined]
    return server


def _quiet_offscreen_warnings() -> object:
    """Drop the offscreen plugin's harmless "propagateSizeHints" warning from the output.

    Returns the previous handler, to be put back afterwards.
    """

    def handler(_mode: QtMsgType, _context: QMessageLogContext, message: str) -> None:
        if "propagateSizeHints" not in message:
            sys.stderr.write(message + "\n")

    return qInstallMessageHandler(handler)


def screenshot(args: argparse.Namespace) -> int:
    """`--screenshot OUT [--view VIEW] FILE`: 0 when written, 2 when FILE cannot be shown."""
    from perfview.qt import screenshot as shots
    from perfview.qt.main_window import MainWindow

    if len(args.files) != 1 and not args.compare:
        print("perfview: --screenshot needs exactly one FILE", file=sys.stderr)
        return 2
    quiet = QApplication.platformName() == "offscreen"
    previous = _quiet_offscreen_warnings() if quiet else None
    window = MainWindow(Settings.ephemeral(), warm=False)  # a big trace's load warms itself
    window.resize(*_size(args.size))
    try:
        if args.compare:
            from perfview.qt.screenshot import screenshot_compare

            a, b = args.compare
            code = screenshot_compare(window, a, b, args.screenshot, args.view)
        else:
            code, _written = shots.run(
                window, args.files[0], shots.single(args.screenshot, args.view)
            )
    finally:
        window.close()
        window.deleteLater()
        if quiet:
            qInstallMessageHandler(previous)  # type: ignore[arg-type]
    return code


def _choose_platform(screenshot: bool, qt_args: list[str]) -> bool:
    """Pick the Qt platform before QApplication exists; False when no window can be shown.

    A screenshot never needs a screen, so it renders offscreen unless the user chose a
    platform: no window flashes up, and it works over ssh and in CI. Without a display Qt
    would abort the process with a long plugin message; a one-line error is kinder.
    """
    if "QT_QPA_PLATFORM" in os.environ or "-platform" in qt_args:
        return True
    if screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _start_window(args: argparse.Namespace) -> tuple[QWidget, object | None]:
    """Show a bare window at once, then build the real one and open the files in it.

    The bare window (`start_window`) needs QtWidgets only, so it is on screen a fraction of a
    second after launch; the main window's imports (pandas, pyqtgraph, the views) follow. The
    modules a big trace needs (numba's scanner, the timeline) are imported in the background
    once the window is up, not before it (`warmup.warm_imports`).
    """
    from perfview.qt.start_window import StartWindow

    watch = None
    if startup_stamps.enabled():
        from perfview.qt.startup_watch import StartupWatch

        watch = StartupWatch(QApplication.instance())  # type: ignore[arg-type]
    files = list(args.files) or ([] if args.compare else ["example.prof"])
    start = StartWindow(files, Settings())
    start.show_now()
    from perfview.qt.main_window import MainWindow

    window = MainWindow(warm=False)
    startup_stamps.stamp("window_built")
    if watch is not None:
        window.document_opened.connect(watch.watch_tab)
    install_excepthook(window)
    server = _serve_instance(window) if not args.new_window else None
    if args.files:
        window.open_paths(args.files)
        if preload.pending():  # it parses in a child meanwhile: import its first page's view
            importlib.import_module(preload.FIRST_PAGE_VIEW)
    elif not args.compare:
        window.open_example(welcome=True)
    if args.compare:
        window.open_compare(*args.compare)
    start.hand_over(window)
    window.warm_later()
    # What the imports made lives as long as the process: freeze it (with almost no garbage
    # among it) and collect as usual from here, so that no later full collection walks it.
    startup_gc.release()
    return window, server


def main(argv: list[str] | None = None, *, end_process: bool = False) -> int:
    """Start the GUI (or take a screenshot); returns the process exit code.

    `end_process` (perfview run as a program, not called by a test): once the window is
    closed or the picture written, background work still running (an open 10 GB trace's
    findings and critical path: minutes, and 21 GB of memory after its picture was
    written) is cancelled and not waited for (`end_workers`)."""
    pyside_features.install()  # before the window's ~750 imports (see its docstring)
    args, qt_args = parse_args(list(sys.argv[1:] if argv is None else argv))
    if not _choose_platform(bool(args.screenshot), qt_args):
        print(
            "perfview: no display to open a window on (DISPLAY/WAYLAND_DISPLAY unset); "
            "use --screenshot OUT.png FILE or the `perfview summary` command",
            file=sys.stderr,
        )
        return 2
    app = make_app(qt_args)
    if args.screenshot:
        code = screenshot(args)
    elif not args.new_window and not args.compare and _forward_to_running(args.files):
        return 0
    else:
        _window, server = _start_window(args)
        code = int(app.exec())
        del server
    if end_process:
        end_workers(code)
    return code


WORKERS_GRACE_MS = 2000


def end_workers(code: int) -> None:
    """The window is gone: cancel the background tasks still running, give them
    WORKERS_GRACE_MS to stop at their next progress report, then, if any is still busy, end
    the process at once after a flush: Qt would wait for every one of them when the
    application is destroyed, and that is what PySide's own exit handler does (the exit
    handlers are skipped then: run on a thread of their own beside a busy worker, PySide's
    crashed the process). Only for perfview's own process: a finished task's files are
    written whole or not at all (the stores rename them in, and sweep what a dead writer
    left on the next start)."""
    from perfview.qt import tasks

    tasks.cancel_all()
    if tasks.wait_all(WORKERS_GRACE_MS):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


__all__ = ["install_excepthook", "main", "make_app", "parse_args"]
