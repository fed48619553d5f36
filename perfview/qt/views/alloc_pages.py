"""Pages of allocation captures (CUDA memory snapshots, memray) in a document tab.

Two hooks for `document_tab.py`, like `torch_pages`: `alloc_specs(bundle, have)` gives the tab
order, `make_alloc_view(name, document)` builds a page (None: use the generic factory, e.g. the
plain table of the `allocations` view or the icicle of `bundle.tree`). Heavy data (timeline
bands, trees) is computed by the loader on its worker thread; pages only draw it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from PySide6.QtWidgets import QWidget

from perfview.qt.document import Document

ALLOC_FORMATS = ("cuda_snapshot", "memray")


def alloc_specs(bundle: Any, have: Collection[str]) -> list[tuple[str, str, str | None]]:
    """(name, title, table to precompute) per tab for an allocation capture."""
    if bundle.format == "cuda_snapshot":
        pages = [
            ("timeline", "Timeline", None),
            ("segments", "Segments", None),
            ("allocations", "Allocations", "allocations"),
            ("oom", "Out of memory", "oom"),
            ("icicle", "Flame graph (live bytes)", None),
        ]
        return [p for p in pages if p[0] in have or p[0] == "icicle"]
    if bundle.format == "memray":
        from perfview.qt.views.memray_pages import memray_specs

        return memray_specs(have)
    return []


def make_alloc_view(name: str, document: Document) -> QWidget | None:
    """The page `name` of an allocation capture, or None to use the generic factory."""
    bundle = document.bundle
    if bundle.format == "cuda_snapshot" and bundle.cuda_snapshot is not None:
        from perfview.qt.views.cuda_memory_view import make_cuda_page

        return make_cuda_page(name, document)
    if bundle.format == "memray" and bundle.memray is not None:
        from perfview.qt.views.memray_pages import make_memray_page

        return make_memray_page(name, document)
    return None
