"""Persistent user settings (recent files, last folder, window geometry, splitter sizes).

Everything goes through one `QSettings` made by `open_settings()`. When the environment variable
`PERFVIEW_SETTINGS` names a file, that INI file is used instead of the platform store, so tests
(and users who want a portable setup) never touch the real settings.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

ORGANIZATION = "perfview"
APPLICATION = "perfview"
ENV_VAR = "PERFVIEW_SETTINGS"
MAX_RECENT = 10


def open_settings() -> QSettings:
    """The settings store: `$PERFVIEW_SETTINGS` (INI) when set, else the platform default."""
    override = os.environ.get(ENV_VAR)
    if override:
        return QSettings(override, QSettings.Format.IniFormat)
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION
    )


class Settings:
    """Typed accessors over a QSettings, so keys and value types live in one place."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store if store is not None else open_settings()

    @classmethod
    def ephemeral(cls) -> Settings:
        """Settings in a fresh temporary INI file: for screenshots and scripted runs, which
        must neither read nor overwrite the user's window geometry and recent files. The
        file's folder goes at exit: a scripted run leaves nothing in the temp folder."""
        folder = tempfile.mkdtemp(prefix="perfview-settings-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return cls(QSettings(str(Path(folder) / "perfview.ini"), QSettings.Format.IniFormat))

    # --- recent files --------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.store.value("recent/files", [])
        if isinstance(value, str):  # QSettings returns a bare string for one-element lists
            value = [value]
        items = list(value) if isinstance(value, list | tuple) else []
        return [str(v) for v in items if v][:MAX_RECENT]

    def add_recent(self, path: str | Path) -> list[str]:
        """Put `path` first in the recent list (deduplicated, at most MAX_RECENT)."""
        text = str(Path(path).resolve())
        files = [text] + [f for f in self.recent_files() if f != text]
        files = files[:MAX_RECENT]
        self.store.setValue("recent/files", files)
        return files

    def remove_recent(self, path: str) -> None:
        self.store.setValue("recent/files", [f for f in self.recent_files() if f != path])

    def clear_recent(self) -> None:
        self.store.setValue("recent/files", [])

    # --- folders ---------------------------------------------------------------------------
    def last_folder(self) -> str:
        value = self.store.value("paths/last_folder", "")
        folder = str(value or "")
        return folder if folder and Path(folder).is_dir() else str(Path.home())

    def set_last_folder(self, folder: str | Path) -> None:
        self.store.setValue("paths/last_folder", str(folder))

    # --- window state ----------------------------------------------------------------------
    def geometry(self, key: str) -> QByteArray | None:
        value = self.store.value(f"window/{key}")
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_geometry(self, key: str, value: QByteArray) -> None:
        self.store.setValue(f"window/{key}", value)

    def splitter_sizes(self, key: str) -> list[int] | None:
        value = self.store.value(f"splitters/{key}")
        if not value:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple):
            return None
        try:
            sizes = [int(v) for v in value]
        except (TypeError, ValueError):
            return None
        return sizes if sizes and any(sizes) else None

    def set_splitter_sizes(self, key: str, sizes: list[int]) -> None:
        self.store.setValue(f"splitters/{key}", [int(s) for s in sizes])

    def sync(self) -> None:
        self.store.sync()


__all__ = ["APPLICATION", "ENV_VAR", "MAX_RECENT", "ORGANIZATION", "Settings", "open_settings"]
