"""How each kind of page widget is built: the Qt half of the page registry.

`perfview.core.pages` declares every page once, with a `widget` key; `BUILDERS` maps that key
to a function that builds the widget from the page's `PageHost` (the document tab) and the data
the page prepared off the GUI thread. A page whose key is "table" gets the generic sortable
table of its CLI view. Widget modules are imported inside the builders, so opening a pstats file
never imports the timeline's code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QWidget

from perfview.core import pages
from perfview.core.model import CallTree
from perfview.qt.document import Document

if TYPE_CHECKING:
    from perfview.qt.tasks import Task


class PageHost(Protocol):
    """What a builder needs from the tab it builds for."""

    document: Document

    def restore_splitter(self, name: str, splitter: QSplitter) -> None: ...

    def run_when_quiet(self, task: Task) -> None: ...


Builder = Callable[[PageHost, str, Any], QWidget]


def placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def table(host: PageHost, name: str, _data: Any = None, **kwargs: object) -> QWidget:
    """The generic page: the CLI view's table, sortable, filterable, linked to the document."""
    from perfview.qt.views.table_view import TableView

    frame = host.document.table(name)
    key = kwargs.pop("key_column", None) or ("name" if "name" in frame.columns else None)
    kind = "op" if name in ("ops", "ops-by-shape", "kernels") else "function"
    linked = host.document if name not in ("lanes", "samples", "memory") else None
    page = pages.PAGES.get(name)
    if page is not None and page.definition and "caption" not in kwargs:
        kwargs["caption"] = page.definition  # the window and definition, beside HTA's
    view = TableView(frame, linked, kind=kind, key_column=key, **kwargs)  # type: ignore[arg-type]
    chart = None if page is None else page.charts.get(host.document.bundle.format)
    if page is None or (chart is None and not page.definitions):
        return view
    from perfview.qt.views.answer_page import AnswerPage

    return AnswerPage(view, frame, chart, page.definitions)


def _timeline(host: PageHost, name: str, data: Any) -> QWidget:
    from perfview.qt.views.timeline_view import TimelineView

    timeline = host.document.bundle.timeline
    if timeline is None:
        return placeholder("This file has no timeline.")
    return TimelineView(
        timeline, host.document, data=data, defer=True, background=host.run_when_quiet
    )


def _icicle(host: PageHost, _name: str, _data: Any) -> QWidget:
    from perfview.qt.views.icicle_view import IcicleView

    tree = host.document.tree()
    if tree is None or len(tree) <= 1:
        return placeholder("This file has no call tree to draw.")
    from perfview.core.analysis.frame_filters import HIDDEN_BY_DEFAULT

    bundle = host.document.bundle
    hidden = HIDDEN_BY_DEFAULT.get(bundle.format, frozenset())
    return IcicleView(tree, host.document, bundle.profile, filters=hidden)


def _tree(host: PageHost, _name: str, _data: Any) -> QWidget:
    from perfview.qt.widgets.call_tree_widget import CallTreeWidget

    tree = host.document.tree()
    if tree is None or len(tree) <= 1:
        return placeholder("This file has no call tree.")
    return CallTreeWidget(tree, host.document)


def _callers(host: PageHost, _name: str, _data: Any) -> QWidget:
    """Callers/callees of the selected function: exact from pstats edges, aggregated from the
    call tree for traces; opens on the heaviest top-level function."""
    from perfview.qt.views.sandwich_view import SandwichView

    profile = host.document.bundle.profile
    tree = host.document.tree()
    widget = SandwichView(tree, host.document, profile)
    if host.document.selection is None and tree is not None:
        _show_heaviest(widget, tree, exact_ids=profile is not None)
    return widget


def _functions(host: PageHost, name: str, _data: Any) -> QWidget:
    profile = host.document.bundle.profile
    if host.document.bundle.sampled is not None:  # frames by self and total weight
        return table(host, name, key_column="name")
    if profile is None:  # memory_profiler: the summary table as is
        return table(host, name, key_column="function")
    from perfview.core.analysis.profile_tables import pstats_functions_frame
    from perfview.qt.views.table_view import TableView

    frame, names = pstats_functions_frame(profile.functions)
    return TableView(
        frame,
        host.document,
        kind="function",
        key_column="function",
        names=names,
        headers=PSTATS_HEADERS,
        units={"ncalls": None},
        sort_column="cumtime_ns",
        id_selection=True,
        stretch_column="function",
    )


def _memory(host: PageHost, name: str, data: Any) -> QWidget:
    from perfview.qt.views import memory_view

    bundle = host.document.bundle
    timeline = bundle.timeline
    if data is not None and timeline is not None:  # a torch trace: the prepared Memory page
        from perfview.qt.views.torch_memory_view import TorchMemoryView

        return TorchMemoryView(timeline, host.document, data=data)
    if bundle.memory is not None:
        plot: QWidget = memory_view.MprofMemoryView(bundle.memory, host.document)
    elif timeline is not None:
        plot = memory_view.TraceMemoryView(timeline, host.document)
    else:
        return placeholder("This file has no memory data.")
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(plot)
    with contextlib.suppress(Exception):  # the plot alone is still useful
        splitter.addWidget(table(host, name))
    splitter.setStretchFactor(0, 3)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([3000, 1000])  # proportions; the widget rescales them
    host.restore_splitter(name, splitter)
    return splitter


def _lines(host: PageHost, _name: str, _data: Any) -> QWidget:
    from perfview.qt.views.line_report_view import LineReportView

    report = host.document.bundle.lines
    if report is None:
        return placeholder("This file has no line report.")
    return LineReportView(report, host.document)


def _overview(host: PageHost, _name: str, data: Any) -> QWidget:
    from perfview.qt.views.torch_overview_view import TorchOverviewView

    timeline = host.document.bundle.timeline
    assert timeline is not None
    return TorchOverviewView(timeline, host.document, data, defer_chart=True)


def _operators(host: PageHost, name: str, data: Any) -> QWidget:
    from perfview.qt.views.torch_ops_view import TorchOpsView

    timeline = host.document.bundle.timeline
    assert timeline is not None
    return TorchOpsView(timeline, host.document, {name: host.document.table(name)}, data=data)


def _kernels(host: PageHost, name: str, data: Any) -> QWidget:
    timeline = host.document.bundle.timeline
    if timeline is None or not timeline.is_torch:
        return table(host, name)
    from perfview.qt.views.torch_kernels_view import TorchKernelsView

    return TorchKernelsView(timeline, host.document, host.document.table(name), data=data)


def _launch_delays(host: PageHost, name: str, data: Any) -> QWidget:
    timeline = host.document.bundle.timeline
    if timeline is None:
        return table(host, name)
    from perfview.core.pages.data import LaunchDelaysData
    from perfview.qt.views.launch_delays_view import LaunchDelaysView

    if data is None:
        data = LaunchDelaysData.compute(timeline, host.document.table(name))
    return LaunchDelaysView(data, host.document)


def _recommendations(host: PageHost, _name: str, data: Any) -> QWidget:
    from perfview.qt.views.recommendations_view import RecommendationsView

    if data is None:
        from perfview.core.analysis.torch.recommend import recommendations

        timeline = host.document.bundle.timeline
        assert timeline is not None
        data = recommendations(timeline)
    return RecommendationsView(data, host.document)


def _critical_path(host: PageHost, _name: str, data: Any) -> QWidget:
    from perfview.core.pages.data import CriticalPathData
    from perfview.qt.views.critical_path_view import CriticalPathView

    if data is None:
        timeline = host.document.bundle.timeline
        assert timeline is not None
        data = CriticalPathData.compute(timeline)
    return CriticalPathView(data, host.document)


def _allocations_page(host: PageHost, name: str, _data: Any) -> QWidget:
    """Pages of allocation captures: CUDA snapshot timeline and segments, memray's temporal
    view and leaks; the plain table when the capture has nothing to draw for the page."""
    bundle = host.document.bundle
    page: QWidget | None = None
    if bundle.cuda_snapshot is not None:
        from perfview.qt.views.cuda_memory_view import make_cuda_page

        page = make_cuda_page(name, host.document)
    elif bundle.memray is not None:
        from perfview.qt.views.memray_pages import make_memray_page

        page = make_memray_page(name, host.document)
    return page if page is not None else table(host, name)


def _query(host: PageHost, _name: str, _data: Any) -> QWidget:
    from perfview.qt.views.query_view import QueryView

    return QueryView(host.document.bundle)


def _flame(host: PageHost, name: str, _data: Any) -> QWidget:
    """Bottom-up and sandwich flame graphs of the document's merged tree."""
    from perfview.qt.views.flame_pages import make_page

    page = make_page(name, host.document)
    return page if page is not None else placeholder("This file has no call tree to draw.")


BUILDERS: dict[str, Builder] = {
    "bottom-up": _flame,
    "sandwich": _flame,
    "query": _query,
    "segments": _allocations_page,
    "allocations": _allocations_page,  # a capture's pages: its timeline is memory over time
    "leaks": _allocations_page,
    "table": table,
    "timeline": _timeline,
    "icicle": _icicle,
    "tree": _tree,
    "callers": _callers,
    "functions": _functions,
    "memory": _memory,
    "lines": _lines,
    "overview": _overview,
    "operators": _operators,
    "kernels": _kernels,
    "launch-delays": _launch_delays,
    "recommendations": _recommendations,
    "critical-path": _critical_path,
}

PSTATS_HEADERS = {
    "ncalls": "ncalls",
    "tottime_ns": "tottime",
    "tot_percall_ns": "percall",
    "cumtime_ns": "cumtime",
    "cum_percall_ns": "percall",
    "function": "filename:lineno(function)",
}


def _show_heaviest(widget: Any, tree: CallTree, *, exact_ids: bool) -> None:
    """Fill an empty callers/callees view with the heaviest top-level function, so the tab
    does not open blank. Goes straight to the view: the shared selection stays untouched."""
    kids = tree.children(0)
    total = tree.metrics.get("total_ns")
    if not len(kids) or total is None:
        return
    node = int(kids[int(np.argmax(total[kids]))])
    frame = int(tree.frame[node])
    widget.show_function(tree.name(node), frame if exact_ids and frame >= 0 else None)


__all__ = ["BUILDERS", "PSTATS_HEADERS", "Builder", "PageHost", "placeholder", "table"]
