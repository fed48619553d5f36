"""Unexpected GUI errors, kept in a log file and offered to the user with a Copy button.

The dialog alone is not enough: users close it before thinking of reporting, and a crash that
repeats at start-up leaves nothing to read. Each error is appended to
`$XDG_STATE_HOME/perfview/crash.log` (`~/.local/state/perfview/crash.log`; the environment
variable `PERFVIEW_STATE_DIR` replaces the folder, for tests). The log rotates at about 1 MB to
`crash.log.1`, so a bug that fires on every repaint cannot fill the disk. Logging never raises:
a read-only home folder must not turn one error into two.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import time
from pathlib import Path

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from perfview import __version__

ENV_STATE_DIR = "PERFVIEW_STATE_DIR"
LOG_NAME = "crash.log"
MAX_BYTES = 1_000_000


def state_dir() -> Path:
    """Where perfview keeps state that is not settings (XDG base directory spec)."""
    override = os.environ.get(ENV_STATE_DIR)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "state"
    return base / "perfview"


def log_path() -> Path:
    return state_dir() / LOG_NAME


def header() -> str:
    """What a bug report needs besides the traceback."""
    when = time.strftime("%Y-%m-%d %H:%M:%S %z")
    return (
        f"=== {when} perfview {__version__}, Python {platform.python_version()}, "
        f"{platform.platform()}"
    )


def record(details: str) -> Path | None:
    """Append one error to the log (rotating first when it is full); the log's path or None."""
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size >= MAX_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        with open(path, "a", encoding="utf-8", errors="replace") as fh:
            fh.write(f"{header()}\n{details.rstrip()}\n\n")
    except OSError as exc:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"perfview: could not write the crash log {path}: {exc}\n")
        return None
    return path


def copy_to_clipboard(text: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)


def error_box(
    parent: QWidget | None, summary: str, details: str, logged: Path | None
) -> QMessageBox:
    """A non-modal box with the error, its details and a "Copy details" button that copies
    them without closing the box (users paste them into a bug report)."""
    box = QMessageBox(QMessageBox.Icon.Critical, "perfview: unexpected error", "", parent=parent)
    box.setText(f"An unexpected error occurred:\n{summary}")
    info = "perfview keeps running; the view involved may be incomplete."
    if logged is not None:
        info += f"\nThe details were saved to {logged}."
    box.setInformativeText(info)
    box.setDetailedText(details)
    copy = QPushButton("Copy details", box)
    box.addButton(copy, QMessageBox.ButtonRole.ActionRole)
    # QMessageBox closes on any of its buttons: cut the button's own connection to the box
    # so that copying leaves the box open, then copy on click.
    copy.clicked.disconnect()
    copy.clicked.connect(lambda: copy_to_clipboard(f"{header()}\n{details}"))
    box.addButton(QMessageBox.StandardButton.Close)
    box.setProperty("copy_button", copy)
    return box


__all__ = ["copy_to_clipboard", "error_box", "header", "log_path", "record", "state_dir"]
