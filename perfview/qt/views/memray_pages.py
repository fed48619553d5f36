"""memray capture pages (filled in with the memray loader)."""

from __future__ import annotations

from collections.abc import Collection

from PySide6.QtWidgets import QWidget

from perfview.qt.document import Document


def memray_specs(have: Collection[str]) -> list[tuple[str, str, str | None]]:
    return []


def make_memray_page(name: str, document: Document) -> QWidget | None:
    return None
