"""The page registry: every page of a document declared once, read by tabs, workers and the CLI.

A `Page` says everything about one page: its name (also the `perfview summary --view` name when
it has a table), its title, the table the CLI prints for it per bundle format (`tables`), when
a bundle has data for it (`has_data`), what it computes off the GUI thread (`prepare`, with
`prepare_when`), and which widget kind the GUI builds for it (`widget`, a key of the Qt side's
one builder table, `perfview.qt.page_widgets.BUILDERS`; None for CLI-only tables).

Which pages a document's tab shows, in which order, is a property of the kind of document
(`KINDS`: pstats, torch trace, plain trace, mprof, memory_profiler report): each kind lists its
`Tab`s. A tab whose page has a table for the bundle's format is shown when that table has data;
a purely graphical page (timeline, icicle, call tree) always is.

Adding a page: one `Page` entry in `PAGES` and one `Tab` in the kinds that show it (plus a
widget builder on the Qt side when it is not a plain table). Everything here is pure (no Qt),
so worker threads and the CLI read it freely.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from perfview.core.analysis import aggregate
from perfview.core.analysis.torch import kernels as torch_kernels
from perfview.core.analysis.torch import memory_alloc, op_kernels, overview, ranks, recommend
from perfview.core.analysis.torch.common import step_rows
from perfview.core.model import Bundle, LineReport, MemoryProfile, PstatsProfile, Timeline
from perfview.core.model.errors import LoadError
from perfview.core.pages import data as page_data

TableFn = Callable[[Bundle], pd.DataFrame]
HasData = Callable[[Bundle], bool]
Tables = Mapping[str, pd.DataFrame]
Prepare = Callable[[Bundle, Tables], Any]


class ViewError(LoadError):
    """The view does not exist or does not apply to this file; `str()` is one user sentence.

    A LoadError subclass so callers that already turn LoadError into "exit 2, one line" need
    nothing new.
    """


def _always(_bundle: Bundle) -> bool:
    return True


@dataclass(frozen=True)
class Page:
    """One page: its CLI table per format, when it has data, its off-thread data, its widget."""

    name: str
    title: str
    description: str
    tables: Mapping[str, TableFn] = field(default_factory=dict)
    has_data: HasData = _always
    widget: str | None = "table"  # key of the GUI's builder table; None: CLI only
    prepare: Prepare | None = None  # data computed off the GUI thread for the widget
    prepare_when: HasData = _always  # the bundles `prepare` has work for


def _timeline(bundle: Bundle) -> Timeline:
    if bundle.timeline is None:
        raise ViewError(f"{bundle.path} holds no trace timeline")
    return bundle.timeline


def _profile(bundle: Bundle) -> PstatsProfile:
    if bundle.profile is None:
        raise ViewError(f"{bundle.path} holds no cProfile statistics")
    return bundle.profile


def _memory(bundle: Bundle) -> MemoryProfile:
    if bundle.memory is None:
        raise ViewError(f"{bundle.path} holds no memory samples")
    return bundle.memory


def _lines(bundle: Bundle) -> LineReport:
    if bundle.lines is None:
        raise ViewError(f"{bundle.path} holds no line report")
    return bundle.lines


def _has_kind(kind: str) -> HasData:
    def check(bundle: Bundle) -> bool:
        tl = bundle.timeline
        return tl is not None and bool((tl.events["kind"] == kind).any())

    return check


def _has_memory(bundle: Bundle) -> bool:
    if bundle.format == "trace":
        return bundle.timeline is not None and len(bundle.timeline.memory) > 0
    return True


def _is_torch(bundle: Bundle) -> bool:
    return bundle.timeline is not None and bundle.timeline.is_torch


def _has_steps(bundle: Bundle) -> bool:
    return bundle.timeline is not None and len(step_rows(bundle.timeline)) > 0


def _has_gpu(bundle: Bundle) -> bool:
    tl = bundle.timeline
    return tl is not None and bool(tl.events["kind"].isin(["kernel", "memcpy", "memset"]).any())


def _has_shapes(bundle: Bundle) -> bool:
    tl = bundle.timeline
    return tl is not None and bool((tl.events["shape"].astype(str) != "").any())


def _timeline_data(bundle: Bundle, _tables: Tables) -> Any:
    from perfview.core.layout.timeline_layout import prepare_timeline

    assert bundle.timeline is not None
    return prepare_timeline(bundle.timeline)


def _has_events(bundle: Bundle) -> bool:
    return bundle.timeline is not None and len(bundle.timeline.events) > 0


def _has_torch_memory(bundle: Bundle) -> bool:
    return _is_torch(bundle) and _has_memory(bundle)


def _torch_timeline(bundle: Bundle) -> Timeline:
    assert bundle.timeline is not None
    return bundle.timeline


PAGES: dict[str, Page] = {
    page.name: page
    for page in (
        Page(
            "functions",
            "Functions",
            "per function: calls and times (pstats); per function memory (line reports)",
            {
                "pstats": lambda b: aggregate.functions_table(_profile(b)),
                "memprof_text": lambda b: aggregate.line_functions_table(_lines(b)),
            },
            widget="functions",
        ),
        Page(
            "callers",
            "Callers",
            "every caller → callee edge with exact pstats numbers",
            {"pstats": lambda b: aggregate.callers_table(_profile(b))},
            widget="callers",
        ),
        Page(
            "overview",
            "Overview",
            "torch trace overview: GPUs, step times, step breakdown, GPU utilisation",
            {"trace": lambda b: overview.overview_table(_timeline(b))},
            has_data=_is_torch,
            widget="overview",
            prepare=lambda b, _t: page_data.OverviewData.compute(_torch_timeline(b)),
            prepare_when=_is_torch,
        ),
        Page(
            "steps",
            "Steps",
            "ProfilerStep durations with the per-step time breakdown",
            {"trace": lambda b: overview.steps_table(_timeline(b))},
            has_data=_has_steps,
            widget=None,
        ),
        Page(
            "utilization",
            "GPU utilization",
            "per device and stream: busy, compute, communication, memory and idle time",
            {"trace": lambda b: overview.utilization_table(_timeline(b))},
            has_data=_has_gpu,
            widget=None,
        ),
        Page(
            "ops",
            "Ops",
            "operators (or slices) by name: calls, self and total time",
            {"trace": lambda b: aggregate.ops_table(_timeline(b))},
        ),
        Page(
            "operators",
            "Operators",
            "torch operators by name: calls, host and device (GPU) self/total time",
            {"trace": lambda b: op_kernels.ops_table(_timeline(b))},
            has_data=_has_kind("cpu_op"),
            widget="operators",
            prepare=lambda b, t: page_data.OpsData.compute(_torch_timeline(b), t.get("operators")),
            prepare_when=_is_torch,
        ),
        Page(
            "operators-by-shape",
            "Operators by shape",
            "torch operators by name and input shape, host and device time",
            {"trace": lambda b: op_kernels.ops_table(_timeline(b), by_shape=True)},
            has_data=_has_shapes,
            widget=None,
        ),
        Page(
            "op-kernels",
            "Op → kernels",
            "GPU kernels/copies grouped by the operator that launched them",
            {"trace": lambda b: op_kernels.op_kernels_table(_timeline(b))},
            has_data=_has_gpu,
            widget=None,
        ),
        Page(
            "ops-by-shape",
            "Ops by shape",
            "operators by name and input shapes",
            {"trace": lambda b: aggregate.ops_table(_timeline(b), by_shape=True)},
            has_data=_has_shapes,
        ),
        Page(
            "kernels",
            "Kernels",
            "GPU kernels by name, with launch configuration, occupancy and tensor-core use",
            {"trace": lambda b: torch_kernels.kernels_table(_timeline(b))},
            has_data=_has_kind("kernel"),
            widget="kernels",
            prepare=lambda b, t: page_data.KernelsData.compute(
                _torch_timeline(b), t.get("kernels")
            ),
            prepare_when=_is_torch,
        ),
        Page(
            "lanes",
            "Lanes",
            "threads and GPU streams: events, busy time, depth",
            {"trace": lambda b: aggregate.lanes_table(_timeline(b))},
        ),
        Page(
            "memory",
            "Memory",
            "per run peak and final memory (mprof); per device allocations (torch traces)",
            {
                "mprof": lambda b: aggregate.memory_table(_memory(b)),
                "trace": lambda b: aggregate.trace_memory_table(_timeline(b)),
            },
            has_data=_has_memory,
            widget="memory",
            prepare=lambda b, _t: page_data.MemoryData.compute(_torch_timeline(b)),
            prepare_when=_has_torch_memory,
        ),
        Page(
            "allocations",
            "Allocations",
            "torch memory allocations paired with their frees (op, size, lifetime)",
            {"trace": lambda b: memory_alloc.allocations_table(_timeline(b))},
            has_data=_has_memory,
            widget=None,
        ),
        Page(
            "ranks",
            "Ranks",
            "step times per rank (a folder of per-rank traces; one row for a single file)",
            {"trace": ranks.single_rank_table},
            has_data=_is_torch,
            widget=None,
        ),
        Page(
            "recommendations",
            "Recommendations",
            "findings with evidence: GPU utilisation, data loading, launches, copies, precision",
            {"trace": lambda b: recommend.recommendations_table(_timeline(b))},
            has_data=_is_torch,
            widget="recommendations",
            prepare=lambda b, _t: recommend.recommendations(_torch_timeline(b)),
            prepare_when=_is_torch,
        ),
        Page(
            "lines",
            "Lines",
            "memory_profiler lines, biggest increment first",
            {"memprof_text": lambda b: aggregate.lines_table(_lines(b))},
            widget="lines",
        ),
        Page(
            "samples",
            "Samples",
            "raw mprof memory samples",
            {"mprof": lambda b: aggregate.samples_table(_memory(b))},
        ),
        Page(
            "timeline",
            "Timeline",
            "slices on their threads and GPU streams over time",
            widget="timeline",
            prepare=_timeline_data,
            prepare_when=_has_events,
        ),
        Page("icicle", "Icicle", "the merged call tree as an icicle", widget="icicle"),
        Page("tree", "Call tree", "the merged call tree as an expandable tree", widget="tree"),
    )
}


@dataclass(frozen=True)
class Tab:
    """A page's place in one kind of document. `table`: the load worker precomputes the
    page's CLI table when this tab comes first (it is what the tab opens on)."""

    page: str
    title: str | None = None  # None: the page's own title
    table: bool = False


@dataclass(frozen=True)
class Kind:
    """A kind of document and its tabs, in order. The first kind whose `matches` holds wins."""

    name: str
    matches: HasData
    tabs: tuple[Tab, ...]


def _format(name: str) -> HasData:
    return lambda bundle: bundle.format == name


_CALLERS = Tab("callers", "Callers/Callees")
KINDS: tuple[Kind, ...] = (
    Kind(
        "pstats",
        _format("pstats"),
        (
            Tab("icicle"),
            Tab("functions", table=True),
            Tab("callers", "Callers/Callees", True),
            Tab("tree"),
        ),
    ),
    Kind(
        "torch",
        lambda b: b.format == "trace" and _is_torch(b),
        (
            Tab("overview"),
            Tab("timeline"),
            Tab("operators", table=True),
            Tab("kernels", table=True),
            Tab("memory"),
            Tab("recommendations"),
            Tab("icicle"),
            Tab("ops", "Ops (host)", True),
            Tab("lanes", table=True),
            _CALLERS,
            Tab("tree"),
        ),
    ),
    Kind(
        "trace",
        _format("trace"),
        (
            Tab("timeline"),
            Tab("icicle"),
            Tab("ops", table=True),
            Tab("ops-by-shape", table=True),
            Tab("kernels", table=True),
            Tab("lanes", table=True),
            Tab("memory", table=True),
            _CALLERS,
            Tab("tree"),
        ),
    ),
    Kind("mprof", _format("mprof"), (Tab("memory", table=True), Tab("samples", table=True))),
    Kind("memprof_text", _format("memprof_text"), (Tab("lines"), Tab("functions", table=True))),
)


@dataclass(frozen=True)
class PageTab:
    """One tab of one document: the page name, the tab's title, and the summary table the
    load worker should precompute for it (None for graphics pages)."""

    name: str
    title: str
    table: str | None = None


def kind_of(bundle: Bundle) -> Kind | None:
    return next((kind for kind in KINDS if kind.matches(bundle)), None)


def shows(page: Page, bundle: Bundle) -> bool:
    """A page with a table for this format shows when the table has data; others always."""
    if bundle.format in page.tables:
        return page.has_data(bundle)
    return page.widget is not None


# tabs_for per live bundle (by id; an entry goes when its bundle does). Which pages apply
# scans the events (about 0.1 s at 1 GB), so the load task answers it once, off the GUI thread.
_TABS: dict[int, list[PageTab]] = {}


def tabs_for(bundle: Bundle) -> list[PageTab]:
    """The tabs this bundle's document shows, in order. Pure: safe on a worker thread."""
    key = id(bundle)
    tabs = _TABS.get(key)
    if tabs is None:
        tabs = _tabs_for(bundle)
        _TABS[key] = tabs
        weakref.finalize(bundle, _TABS.pop, key, None)
    return list(tabs)


def _tabs_for(bundle: Bundle) -> list[PageTab]:
    kind = kind_of(bundle)
    out: list[PageTab] = []
    for tab in kind.tabs if kind is not None else ():
        page = PAGES[tab.page]
        if shows(page, bundle):
            table = tab.page if tab.table and bundle.format in page.tables else None
            out.append(PageTab(tab.page, tab.title or page.title, table))
    return out


def first_tables(bundle: Bundle) -> list[str]:
    """Summary tables the load worker precomputes: the first page's, when it is a table.

    The others are computed in the background when their page is first shown: a 1 GB trace's
    kernel table alone takes about a second, and most opens never look at every page.
    """
    tabs = tabs_for(bundle)
    return [tabs[0].table] if tabs and tabs[0].table else []


def needs_data(name: str, bundle: Bundle) -> bool:
    """True when page `name` of this bundle has data worth computing off the GUI thread."""
    page = PAGES.get(name)
    return page is not None and page.prepare is not None and page.prepare_when(bundle)


def prepare(name: str, bundle: Bundle, tables: Tables | None = None) -> Any:
    """The data page `name` shows (None when the page needs nothing precomputed). Pure."""
    page = PAGES.get(name)
    if page is None or page.prepare is None or not page.prepare_when(bundle):
        return None
    return page.prepare(bundle, tables or {})


def prepared_pages(bundle: Bundle) -> list[str]:
    """Pages whose data the load task computes before the tab is shown: the page the tab
    opens on and the Timeline (the view a trace is opened for). Pure: safe on a worker."""
    names = [tab.name for tab in tabs_for(bundle)]
    wanted = names[:1] + [n for n in names if n == "timeline"]
    return [n for n in dict.fromkeys(wanted) if needs_data(n, bundle)]


def derived(name: str, data: Any) -> dict[str, Any]:
    """Data of other pages that comes for free with page `name`'s (the Overview's findings are
    the Recommendations page's list), so that page needs no second computation."""
    if name == "overview" and isinstance(data, page_data.OverviewData):
        return {"recommendations": data.findings}
    return {}


__all__ = [
    "KINDS",
    "PAGES",
    "Kind",
    "Page",
    "PageTab",
    "Tab",
    "ViewError",
    "derived",
    "first_tables",
    "kind_of",
    "needs_data",
    "prepare",
    "prepared_pages",
    "shows",
    "tabs_for",
]
