"""Which torch analysis pages a trace's document tab shows, and how each is built.

Kept out of `document_tab.py` so that file only needs two hooks: `torch_specs(have)` gives the
tab order for a torch trace (Overview first, like the TensorBoard plugin, then Timeline,
Operators, Kernels, Memory, Recommendations, then the generic views), and
`make_torch_view(name, document)` builds one page (None: not a torch page, use the generic
factory). Specs are plain tuples here so this module is importable on a worker thread without
building widgets.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from PySide6.QtWidgets import QWidget

from perfview.qt.document import Document

# (name, title, summary table the load task should precompute, summary view that must exist)
_TORCH_PAGES: tuple[tuple[str, str, str | None, str | None], ...] = (
    ("overview", "Overview", None, "overview"),
    ("timeline", "Timeline", None, None),
    ("operators", "Operators", "operators", "operators"),
    ("kernels", "Kernels", "kernels", "kernels"),
    ("memory", "Memory", None, "allocations"),
    ("recommendations", "Recommendations", None, "recommendations"),
    ("modules", "Modules", "modules", "modules"),  # issue 21: tables of core.torch modules/streams
    ("idle", "GPU idle", "idle", "idle"),
    ("overlap", "Comm overlap", "overlap", "overlap"),
    ("launch-delays", "Launch delays", "launch-delays", "launch-delays"),
    ("icicle", "Icicle", None, None),
    # Host-only slices by name (any slice kind, as for non-torch traces; `--view ops`).
    ("ops", "Ops (host)", "ops", None),
    ("lanes", "Lanes", "lanes", "lanes"),
    ("callers", "Callers/Callees", None, None),
    ("tree", "Call tree", None, None),
)
TORCH_PAGE_NAMES = ("overview", "operators", "kernels", "memory", "recommendations")


def is_torch_tab(have: Collection[str]) -> bool:
    """A trace gets the torch pages when the summary registry offers its Overview."""
    return "overview" in have


def torch_specs(have: Collection[str]) -> list[tuple[str, str, str | None]]:
    """(name, title, table) per tab, in order, for a torch trace whose views are `have`."""
    out = []
    for name, title, table, needs in _TORCH_PAGES:
        if needs is not None and needs not in have:
            continue
        out.append((name, title, table))
    return out


def make_torch_view(name: str, document: Document, data: Any = None) -> QWidget | None:
    """The torch page `name` for `document`, or None when `name` is not a torch page.

    `data` is what `core.page_data.prepare(name, ...)` computed on a worker thread (None: the
    page computes it itself, on this thread).
    """
    timeline = document.bundle.timeline
    if name not in TORCH_PAGE_NAMES or timeline is None or not timeline.is_torch:
        return None
    if name == "overview":
        from perfview.qt.views.torch_overview_view import TorchOverviewView

        return TorchOverviewView(timeline, document, data, defer_chart=True)
    if name == "operators":
        from perfview.qt.views.torch_ops_view import TorchOpsView

        tables = {"operators": document.table("operators")}
        return TorchOpsView(timeline, document, tables, data=data)
    if name == "kernels":
        from perfview.qt.views.torch_kernels_view import TorchKernelsView

        return TorchKernelsView(timeline, document, document.table("kernels"), data=data)
    if name == "memory":
        from perfview.qt.views.torch_memory_view import TorchMemoryView, has_torch_memory

        if not has_torch_memory(timeline):
            return None
        return TorchMemoryView(timeline, document, data=data)
    from perfview.qt.views.recommendations_view import RecommendationsView

    if data is None:
        from perfview.core.torch.recommend import recommendations

        data = recommendations(timeline)
    return RecommendationsView(data, document)


__all__ = ["TORCH_PAGE_NAMES", "is_torch_tab", "make_torch_view", "torch_specs"]
