"""The tab for one open document: a warnings bar and one sub-tab per view of its format.

Which views a format gets is decided by `view_specs(bundle)`, a pure function (no Qt calls), so
the load worker can ask it which summary tables to precompute. Views are built lazily, the
first time their sub-tab is shown: a trace's Timeline is not paid for when the user only wants
the Ops table. A view that fails to build shows its error in place; the rest of the tab works.

Pages with heavy data (timeline geometry, torch Overview/Kernels/Memory/Recommendations; see
`core.page_data`) never compute it on the GUI thread when the user switches to them: the page
shows "Preparing…" while a worker task computes the data, then builds its widgets from it. The
load task already prepares the first page and the Timeline (`prepared_pages`), so a new tab
appears drawn. `view_widget`/`show_view` stay synchronous (scripts and tests rely on that).

The Timeline and Icicle views come from another module that may not exist yet in a checkout;
they are imported on demand and replaced by a placeholder label when missing.
"""

from __future__ import annotations

import contextlib
import importlib
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from perfview.core import page_data
from perfview.core.model import Bundle, CallTree
from perfview.qt.document import Document
from perfview.qt.settings import Settings
from perfview.qt.tasks import Task
from perfview.qt.views import flame_pages
from perfview.qt.views.torch_pages import is_torch_tab, make_torch_view, torch_specs
from perfview.qt.widgets.info_bar import InfoBar


@dataclass(frozen=True)
class ViewSpec:
    """One view of a document: `name` (the CLI's view name where one exists), its tab title,
    and `table`, the summary view it needs precomputed (None for pure graphics views)."""

    name: str
    title: str
    table: str | None = None


def _summary_views(bundle: Bundle) -> list[str]:
    try:
        from perfview.core import summary
    except ImportError:
        return []
    return list(summary.available_views(bundle))


# view_specs per live bundle (by id; an entry goes when its bundle does). Which views apply
# scans the events (about 0.1 s at 1 GB), so the load task answers it once, off the GUI thread.
_SPECS: dict[int, list[ViewSpec]] = {}


def view_specs(bundle: Bundle) -> list[ViewSpec]:
    """The views this bundle's tab shows, in tab order. Pure: safe on a worker thread."""
    key = id(bundle)
    specs = _SPECS.get(key)
    if specs is None:
        specs = _view_specs(bundle)
        _SPECS[key] = specs
        weakref.finalize(bundle, _SPECS.pop, key, None)
    return list(specs)


def _view_specs(bundle: Bundle) -> list[ViewSpec]:
    have = set(_summary_views(bundle))
    specs: list[ViewSpec] = []
    if bundle.format == "pstats":
        specs = [
            ViewSpec("icicle", "Icicle"),
            ViewSpec("functions", "Functions", "functions"),
            ViewSpec("callers", "Callers/Callees", "callers"),
            ViewSpec("tree", "Call tree"),
        ]
    elif bundle.format == "trace" and is_torch_tab(have):
        specs = [ViewSpec(*spec) for spec in torch_specs(have)]
    elif bundle.format == "trace":
        specs = [ViewSpec("timeline", "Timeline"), ViewSpec("icicle", "Icicle")]
        for name, title in (
            ("ops", "Ops"),
            ("ops-by-shape", "Ops by shape"),
            ("kernels", "Kernels"),
            ("lanes", "Lanes"),
            ("memory", "Memory"),
        ):
            if name in have:
                specs.append(ViewSpec(name, title, name))
        specs.append(ViewSpec("callers", "Callers/Callees"))
        specs.append(ViewSpec("tree", "Call tree"))
    elif bundle.format == "mprof":
        specs = [ViewSpec("memory", "Memory", "memory" if "memory" in have else None)]
        if "samples" in have:
            specs.append(ViewSpec("samples", "Samples", "samples"))
    elif bundle.format == "memprof_text":
        specs = [ViewSpec("lines", "Lines")]
        if "functions" in have:
            specs.append(ViewSpec("functions", "Functions", "functions"))
    elif bundle.format == "sampled":
        specs = [ViewSpec(*spec) for spec in flame_pages.sampled_specs(bundle, have)]
    at = next((i + 1 for i, s in enumerate(specs) if s.name == "icicle"), len(specs))
    specs[at:at] = [ViewSpec(*s) for s in flame_pages.page_specs(bundle, [s.name for s in specs])]
    return specs


def table_views(bundle: Bundle) -> list[str]:
    """Summary tables the load worker precomputes: the first page's, when it is a table.

    The others are computed in the background when their page is first shown: a 1 GB trace's
    kernel table alone takes about a second, and most opens never look at every page.
    """
    specs = view_specs(bundle)
    return [specs[0].table] if specs and specs[0].table else []


def prepared_pages(bundle: Bundle) -> list[str]:
    """Pages whose data the load task computes before the tab is shown: the page the tab
    opens on and the Timeline (the view a trace is opened for). Pure: safe on a worker."""
    names = [spec.name for spec in view_specs(bundle)]
    wanted = names[:1] + [n for n in names if n == "timeline"]
    return [n for n in dict.fromkeys(wanted) if page_data.needs_data(n, bundle)]


@dataclass(frozen=True)
class _Table:
    """A summary table computed in the background for a table page."""

    name: str
    frame: pd.DataFrame


def _summary(bundle: Bundle, table: str) -> _Table:
    from perfview.core import summary

    return _Table(table, summary.summarize(bundle, table))


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class DocumentTab(QWidget):
    """Info bar + view tabs for one `Document`. `view_changed(name)` fires on a switch."""

    view_changed = Signal(str)

    def __init__(
        self,
        document: Document,
        tables: dict[str, pd.DataFrame] | None = None,
        settings: Settings | None = None,
        parent: QWidget | None = None,
        pages: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.specs = view_specs(document.bundle)
        self._views: dict[str, QWidget] = {}
        self._pages: dict[str, QWidget] = {}
        self._splitters: dict[str, QSplitter] = {}
        self._tables = dict(tables or {})
        self._data: dict[str, Any] = {}  # prepared page data (core.page_data) by page name
        self._preparing: dict[str, tuple[Task, QLabel]] = {}
        self._async = False  # switches prepare in the background once the tab is built
        for name, data in (pages or {}).items():
            self._adopt(name, data)
        document.seed_tables(self._tables)

        self.info_bar = InfoBar(self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        for spec in self.specs:
            page = QWidget()
            QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages[spec.name] = page
            self.tabs.addTab(page, spec.title)
        if not self.specs:
            self.tabs.addTab(_placeholder("Nothing to show for this file."), "Empty")
        self.tabs.currentChanged.connect(self._on_tab)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.info_bar)
        layout.addWidget(self.tabs, 1)
        self._show_warnings()
        document.view_requested.connect(self.show_view)
        if self.specs:
            self._on_tab(0)
        self._async = True

    # --- public API ------------------------------------------------------------------------
    def view_names(self) -> list[str]:
        return [spec.name for spec in self.specs]

    def view_titles(self) -> list[tuple[str, str]]:
        return [(spec.name, spec.title) for spec in self.specs]

    def current_view(self) -> str:
        index = self.tabs.currentIndex()
        return self.specs[index].name if 0 <= index < len(self.specs) else ""

    def show_view(self, name: str) -> bool:
        """Switch to view `name` (building it if needed); False if this tab has no such view."""
        names = self.view_names()
        if name not in names:
            return False
        was, self._async = self._async, False  # built right here, not in the background
        try:
            self.tabs.setCurrentIndex(names.index(name))
        finally:
            self._async = was
        self.view_widget(name)
        return True

    def is_preparing(self, name: str | None = None) -> bool:
        """True while page `name` (any page, when None) waits for its data from a worker."""
        return bool(self._preparing) if name is None else name in self._preparing

    def view_widget(self, name: str) -> QWidget | None:
        """The view's widget, built on first request (None if the tab has no such view)."""
        if name not in self._pages:
            return None
        if name not in self._views:
            if name not in self._data and page_data.needs_data(name, self.document.bundle):
                # asked for now: compute here, not in the background (a missing summary
                # table is computed by the view itself)
                self._adopt(name, page_data.prepare(name, self.document.bundle, self._tables))
            self._build(name)
        return self._views.get(name)

    def save_state(self) -> None:
        """Remember splitter sizes (called by the window when it closes or the tab closes)."""
        if self.settings is None:
            return
        for name, splitter in self._splitters.items():
            self.settings.set_splitter_sizes(
                f"{self.document.bundle.format}/{name}", splitter.sizes()
            )

    # --- internals -------------------------------------------------------------------------
    def _show_warnings(self) -> None:
        warnings = list(self.document.bundle.warnings)
        if not warnings:
            return
        first = warnings[0]
        more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
        self.info_bar.show_message(f"{first}{more}", "warning", "\n".join(warnings))

    def _on_tab(self, index: int) -> None:
        if not 0 <= index < len(self.specs):
            return
        name = self.specs[index].name
        if self._async and name not in self._views and self._needs_data(name):
            self._prepare_in_background(name)
        else:
            self.view_widget(name)
        self.view_changed.emit(name)

    def _needs_data(self, name: str) -> bool:
        if name not in self._data and page_data.needs_data(name, self.document.bundle):
            return True
        return self._missing_table(name) is not None

    def _missing_table(self, name: str) -> str | None:
        """The summary table page `name` shows when it is not computed yet, else None."""
        table = next((spec.table for spec in self.specs if spec.name == name), None)
        return table if table and not self.document.has_table(table) else None

    def _adopt(self, name: str, data: Any) -> None:
        """Keep page `name`'s prepared data (and what other pages get from it for free)."""
        self._data[name] = data
        for other, value in page_data.derived(name, data).items():
            self._data.setdefault(other, value)

    def _prepare_in_background(self, name: str) -> None:
        """Show "Preparing…" on page `name` and compute its data in a worker task."""
        if name in self._preparing:
            return
        title = dict(self.view_titles()).get(name, name)
        label = _placeholder(f"Preparing {title}…")
        layout = self._pages[name].layout()
        assert layout is not None
        layout.addWidget(label)
        bundle, tables = self.document.bundle, dict(self._tables)
        table = self._missing_table(name)
        if name in self._data or not page_data.needs_data(name, bundle):
            assert table is not None
            task = Task(lambda _progress: _summary(bundle, table), name=name)
        else:
            task = Task(lambda _progress: page_data.prepare(name, bundle, tables), name=name)
        task.finished.connect(lambda data, n=name: self._on_prepared(n, data))
        task.failed.connect(lambda message, n=name: self._on_prepare_failed(n, message))
        self._preparing[name] = (task, label)
        task.start()

    def _on_prepared(self, name: str, data: Any) -> None:
        if not shiboken6.isValid(self):
            return  # the tab was closed while its page was being prepared
        if isinstance(data, _Table):
            self.document.seed_tables({data.name: data.frame})
        elif name not in self._data:
            self._adopt(name, data)
        if name not in self._views:
            self._build(name)
        self._drop_preparing(name)

    def _on_prepare_failed(self, name: str, message: str) -> None:
        if not shiboken6.isValid(self):
            return
        if name not in self._views:
            self._show(name, _placeholder(f"This view could not be built:\n{message}"))
        self._drop_preparing(name)

    def _drop_preparing(self, name: str) -> None:
        _task, label = self._preparing.pop(name, (None, None))
        if label is not None and shiboken6.isValid(label):
            label.hide()
            label.deleteLater()

    def _build(self, name: str) -> None:
        try:
            widget = self._make(name)
        except Exception as exc:  # show the failure in place; the other views stay usable
            details = traceback.format_exc()
            widget = _placeholder(f"This view could not be built:\n{type(exc).__name__}: {exc}")
            widget.setToolTip(details)
        self._show(name, widget)

    def _show(self, name: str, widget: QWidget) -> None:
        self._drop_preparing(name)
        self._views[name] = widget
        layout = self._pages[name].layout()
        assert layout is not None
        layout.addWidget(widget)

    def _make(self, name: str) -> QWidget:
        data = self._data.get(name)
        factories: dict[str, Callable[[], QWidget]] = {
            "timeline": lambda: self._make_timeline(data),
            "icicle": self._make_icicle,
            "tree": self._make_tree,
            "callers": self._make_callers,
            "functions": self._make_functions,
            "memory": self._make_memory,
            "lines": self._make_lines,
        }
        torch_page = make_torch_view(name, self.document, data)
        if torch_page is not None:
            return torch_page
        flame_page = flame_pages.make_page(name, self.document)
        if flame_page is not None:
            return flame_page
        factory = factories.get(name)
        return factory() if factory is not None else self._make_table(name)

    def _make_table(self, name: str, **kwargs: object) -> QWidget:
        from perfview.qt.views.table_view import TableView

        frame = self.document.table(name)
        key = kwargs.pop("key_column", None) or ("name" if "name" in frame.columns else None)
        kind = "op" if name in ("ops", "ops-by-shape", "kernels") else "function"
        linked = self.document if name not in ("lanes", "samples", "memory") else None
        return TableView(frame, linked, kind=kind, key_column=key, **kwargs)  # type: ignore[arg-type]

    def _make_timeline(self, data: Any = None) -> QWidget:
        timeline = self.document.bundle.timeline
        if timeline is None:
            return _placeholder("This file has no timeline.")
        module = _optional("perfview.qt.views.timeline_view")
        if module is None:
            return _placeholder("The timeline view is not available in this build.")
        widget: QWidget = module.TimelineView(timeline, self.document, data=data)
        return widget

    def _make_icicle(self) -> QWidget:
        tree = self.document.tree()
        if tree is None or len(tree) <= 1:
            return _placeholder("This file has no call tree to draw.")
        module = _optional("perfview.qt.views.icicle_view")
        if module is None:
            return _placeholder("The icicle view is not available in this build.")
        widget: QWidget = module.IcicleView(tree, self.document, self.document.bundle.profile)
        return widget

    def _make_tree(self) -> QWidget:
        from perfview.qt.widgets.call_tree_widget import CallTreeWidget

        tree = self.document.tree()
        if tree is None or len(tree) <= 1:
            return _placeholder("This file has no call tree.")
        return CallTreeWidget(tree, self.document)

    def _make_callers(self) -> QWidget:
        """Callers/callees of the selected function: exact from pstats edges, aggregated from
        the call tree for traces. Falls back to the plain pstats edge table."""
        profile = self.document.bundle.profile
        module = _optional("perfview.qt.views.sandwich_view")
        if module is not None and hasattr(module, "SandwichView"):
            tree = self.document.tree()
            widget: QWidget = module.SandwichView(tree, self.document, profile)
            if (
                self.document.selection is None
                and tree is not None
                and hasattr(widget, "show_function")
            ):
                _show_heaviest(widget, tree, exact_ids=profile is not None)
            return widget
        if profile is not None:
            return self._make_table("callers", key_column="callee")
        return _placeholder("The callers/callees view is not available in this build.")

    def _make_functions(self) -> QWidget:
        profile = self.document.bundle.profile
        if profile is None:  # memory_profiler: the summary table as is
            return self._make_table("functions", key_column="function")
        from perfview.qt.views.table_view import TableView

        frame, names = pstats_functions_frame(profile.functions)
        return TableView(
            frame,
            self.document,
            kind="function",
            key_column="function",
            names=names,
            headers=PSTATS_HEADERS,
            units={"ncalls": None},
            sort_column="cumtime_ns",
            id_selection=True,
            stretch_column="function",
        )

    def _make_memory(self) -> QWidget:
        from perfview.qt.views import memory_view

        bundle = self.document.bundle
        if bundle.memory is not None:
            plot: QWidget = memory_view.MprofMemoryView(bundle.memory, self.document)
        elif bundle.timeline is not None:
            plot = memory_view.TraceMemoryView(bundle.timeline, self.document)
        else:
            return _placeholder("This file has no memory data.")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(plot)
        with contextlib.suppress(Exception):  # the plot alone is still useful
            splitter.addWidget(self._make_table("memory"))
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([3000, 1000])  # proportions; the widget rescales them
        self._restore_splitter("memory", splitter)
        return splitter

    def _make_lines(self) -> QWidget:
        from perfview.qt.views.line_report_view import LineReportView

        report = self.document.bundle.lines
        if report is None:
            return _placeholder("This file has no line report.")
        return LineReportView(report, self.document)

    def _restore_splitter(self, name: str, splitter: QSplitter) -> None:
        self._splitters[name] = splitter
        if self.settings is not None:
            sizes = self.settings.splitter_sizes(f"{self.document.bundle.format}/{name}")
            if sizes and len(sizes) == splitter.count():
                splitter.setSizes(sizes)


PSTATS_HEADERS = {
    "ncalls": "ncalls",
    "tottime_ns": "tottime",
    "tot_percall_ns": "percall",
    "cumtime_ns": "cumtime",
    "cum_percall_ns": "percall",
    "function": "filename:lineno(function)",
}


def pstats_functions_frame(functions: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """pstats' classic columns, keeping the function id as the index (for exact selection).

    Returns the display frame and the plain function names (what a Selection carries).
    percall follows pstats: tottime / ncalls and cumtime / primitive calls.
    """
    from perfview.core.profile_tables import function_labels

    ncalls = functions["ncalls"].astype("int64")
    prim = functions["primitive_calls"].astype("int64")
    tot = functions["tottime_ns"].astype("float64")
    cum = functions["cumtime_ns"].astype("float64")
    frame = pd.DataFrame(
        {
            "ncalls": ncalls,
            "tottime_ns": functions["tottime_ns"].astype("int64"),
            "tot_percall_ns": (tot / ncalls.where(ncalls > 0)).astype("float64"),
            "cumtime_ns": functions["cumtime_ns"].astype("int64"),
            "cum_percall_ns": (cum / prim.where(prim > 0)).astype("float64"),
            "function": function_labels(functions).astype(object),
        },
        index=functions.index,
    )
    return frame, functions["function"].astype(object)


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


def _optional(module: str) -> Any:
    """Import a module that another part of the project may not have delivered yet."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


__all__ = [
    "PSTATS_HEADERS",
    "DocumentTab",
    "ViewSpec",
    "prepared_pages",
    "pstats_functions_frame",
    "table_views",
    "view_specs",
]
