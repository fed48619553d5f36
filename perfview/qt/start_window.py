"""The window `perfview FILE` shows at once, while the real window's modules still import.

The main window needs pandas, numpy, pyqtgraph and most of perfview (0.6-1 s of imports on a
calm machine, several seconds on a busy one). Until then the user would see nothing and might
launch perfview again. This window needs only QtWidgets: it takes the saved geometry, says
which file is opening, and is painted before the heavy imports start. The main window then
takes its place at the same position and size (`hand_over`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QDeadlineTimer, QEventLoop, Qt
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QVBoxLayout, QWidget

from perfview.qt.settings import Settings


class _Label(QLabel):
    """A label that knows it was painted: the window is then on screen."""

    painted = False

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        self.painted = True


class StartWindow(QMainWindow):
    """A bare window titled like the real one: "Opening NAME…" and a busy bar."""

    def __init__(self, files: list[str], settings: Settings) -> None:
        super().__init__()
        self.setWindowTitle("perfview")
        self.resize(1400, 900)
        geometry = settings.geometry("main")
        if geometry is not None:
            self.restoreGeometry(geometry)
        names = ", ".join(Path(f).name for f in files[:3]) + ("…" if len(files) > 3 else "")
        self.label = _Label(f"Opening {names}…" if names else "Starting perfview…")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        bar = QProgressBar()
        bar.setRange(0, 0)  # busy: nothing to measure yet
        bar.setFixedWidth(360)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.addStretch(1)
        layout.addWidget(self.label)
        layout.addWidget(bar, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
        self.setCentralWidget(central)

    @property
    def painted(self) -> bool:
        return self.label.painted

    def show_now(self, timeout_ms: int = 500) -> None:
        """Show the window and return once it is painted (or `timeout_ms` passed): the heavy
        imports that follow hold the GUI thread, so it must be on screen before them."""
        self.show()
        loop = QEventLoop()
        deadline = QDeadlineTimer(timeout_ms)
        while not self.painted and not deadline.hasExpired():
            loop.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 20)

    def hand_over(self, window: QWidget) -> None:
        """Show `window` where this one is, then close this one."""
        if self.isVisible():
            window.setGeometry(self.geometry())
            if self.isMaximized():
                window.showMaximized()
            else:
                window.show()
        else:  # closed by the user before the real window was ready: show it anyway
            window.show()
        self.close()
        self.deleteLater()


__all__ = ["StartWindow"]
