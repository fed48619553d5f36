"""A slim message bar shown at the top of a tab or window (load warnings, load errors).

Non-modal on purpose: a warning about a file must not block the rest of the app, and tests can
inspect it without fighting a modal dialog.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMessageBox, QToolButton, QWidget

_TINTS = {"info": "#3b82f6", "warning": "#d97706", "error": "#dc2626"}


class InfoBar(QFrame):
    """Icon-less text, an optional "Details" button and a close button."""

    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("InfoBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_button = QToolButton(self)
        self.details_button.setText("Details…")
        self.details_button.clicked.connect(self.show_details)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Hide this message")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.details_button)
        layout.addWidget(self.close_button)
        self.level = "info"
        self.details = ""
        self.details_box: QMessageBox | None = None
        self.hide()

    def show_message(self, text: str, level: str = "info", details: str = "") -> None:
        """Show `text`; `details` (long text) is offered behind the Details button."""
        self.level = level
        self.details = details
        self.label.setText(text)
        self.details_button.setVisible(bool(details))
        self._tint(_TINTS.get(level, _TINTS["info"]))
        self.show()

    def _tint(self, accent: str) -> None:
        # Blend the accent into the palette's window colour: readable in light and dark themes.
        palette = self.palette()
        window = palette.color(QPalette.ColorRole.Window)
        tint = QColor(accent)
        mixed = QColor(
            (window.red() * 4 + tint.red()) // 5,
            (window.green() * 4 + tint.green()) // 5,
            (window.blue() * 4 + tint.blue()) // 5,
        )
        palette.setColor(QPalette.ColorRole.Window, mixed)
        self.setPalette(palette)

    def show_details(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle("Details")
        box.setIcon(
            QMessageBox.Icon.Warning if self.level != "info" else QMessageBox.Icon.Information
        )
        box.setText(self.label.text())
        box.setDetailedText(self.details)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.open()  # non-blocking
        self.details_box = box

    def dismiss(self) -> None:
        self.hide()
        self.closed.emit()


__all__ = ["InfoBar"]
