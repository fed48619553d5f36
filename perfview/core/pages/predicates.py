"""Predicates and accessors the page registry declares its pages with: whether a bundle has
the data a page needs (`has_*`, `is_torch`, `format_is`), the typed part of a bundle a table is
computed from (`timeline`, `profile`, …, which raise `ViewError` when it is missing), and the
data a page's widget is prepared with off the GUI thread (`*_data`). They are their own module so
that `registry.py` holds only the declarations (`PAGES`, `KINDS`) and reads as a list."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis import cuda_memory_views
from perfview.core.analysis.torch import modules, recommend
from perfview.core.analysis.torch.common import GPU_KINDS, step_rows
from perfview.core.analysis.torch.presence import has_comm_kernels, kinds_present
from perfview.core.model import Bundle, LineReport, MemoryProfile, PstatsProfile, Timeline
from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.job import Job
from perfview.core.model.logdir import LogDir
from perfview.core.model.memray_model import MemrayCapture
from perfview.core.pages import data as page_data
from perfview.core.pages.page import HasData, Tables, ViewError


def timeline(bundle: Bundle) -> Timeline:
    if bundle.timeline is None:
        raise ViewError(f"{bundle.path} holds no trace timeline")
    return bundle.timeline


def profile(bundle: Bundle) -> PstatsProfile:
    if bundle.profile is None:
        raise ViewError(f"{bundle.path} holds no cProfile statistics")
    return bundle.profile


def memory(bundle: Bundle) -> MemoryProfile:
    if bundle.memory is None:
        raise ViewError(f"{bundle.path} holds no memory samples")
    return bundle.memory


def lines(bundle: Bundle) -> LineReport:
    if bundle.lines is None:
        raise ViewError(f"{bundle.path} holds no line report")
    return bundle.lines


def snapshot(bundle: Bundle) -> CudaSnapshot:
    if bundle.cuda_snapshot is None:
        raise ViewError(f"{bundle.path} holds no CUDA memory snapshot")
    return bundle.cuda_snapshot


def memray(bundle: Bundle) -> MemrayCapture:
    if bundle.memray is None:
        raise ViewError(f"{bundle.path} holds no memray capture")
    return bundle.memray


def job(bundle: Bundle) -> Job:
    if bundle.job is None:
        raise ViewError(f"{bundle.path} is not a multi-rank job")
    return bundle.job


def logdir(bundle: Bundle) -> LogDir:
    if bundle.logdir is None:
        raise ViewError(f"{bundle.path} is not a profile log directory")
    return bundle.logdir


def has_history(bundle: Bundle) -> bool:
    return bundle.cuda_snapshot is None or len(bundle.cuda_snapshot.trace) > 0


def has_oom(bundle: Bundle) -> bool:
    return bundle.cuda_snapshot is not None and cuda_memory_views.has_oom(bundle.cuda_snapshot)


def has_kind(kind: str) -> HasData:
    def check(bundle: Bundle) -> bool:
        tl = bundle.timeline
        return tl is not None and kind in kinds_present(tl.events)

    return check


def has_memory(bundle: Bundle) -> bool:
    if bundle.format in ("cuda_snapshot", "memray"):
        return True
    if bundle.format == "trace":
        return bundle.timeline is not None and len(bundle.timeline.memory) > 0
    return True


def is_torch(bundle: Bundle) -> bool:
    return bundle.timeline is not None and bundle.timeline.is_torch


def has_steps(bundle: Bundle) -> bool:
    return bundle.timeline is not None and len(step_rows(bundle.timeline)) > 0


def has_gpu(bundle: Bundle) -> bool:
    tl = bundle.timeline
    return tl is not None and not kinds_present(tl.events).isdisjoint(GPU_KINDS)


def has_tree(bundle: Bundle) -> bool:
    """A call tree to draw: the loader's (sampled profiles), or one built from pstats or a
    trace's slices."""
    return (
        bundle.tree is not None
        or bundle.profile is not None
        or (bundle.timeline is not None and len(bundle.timeline.events) > 0)
    )


def has_modules(bundle: Bundle) -> bool:
    return bundle.timeline is not None and modules.has_modules(bundle.timeline)


def has_comm(bundle: Bundle) -> bool:
    return bundle.timeline is not None and has_comm_kernels(bundle.timeline.events)


def has_shapes(bundle: Bundle) -> bool:
    """Any slice with an input shape: asked of the few categories, then of the codes (the
    column as text would be millions of Python strings)."""
    tl = bundle.timeline
    if tl is None:
        return False
    shape = tl.events["shape"]
    if not isinstance(shape.dtype, pd.CategoricalDtype):
        return bool((shape.astype(str) != "").any())
    shown = np.append(np.asarray(shape.cat.categories.astype(str) != ""), True)  # NaN: "nan"
    return bool(shown[shape.cat.codes.to_numpy()].any())


def format_is(name: str) -> HasData:
    return lambda bundle: bundle.format == name


is_job = format_is("job")


def any_of(*checks: HasData) -> HasData:
    """A page with tables for several formats: data when any format's own check says so."""
    return lambda bundle: any(check(bundle) for check in checks)


def is_torch_trace(bundle: Bundle) -> bool:
    return bundle.format == "trace" and is_torch(bundle)


def timeline_data(bundle: Bundle, _tables: Tables) -> Any:
    from perfview.core.layout.timeline_layout import prepare_timeline

    assert bundle.timeline is not None
    return prepare_timeline(bundle.timeline)


def has_events(bundle: Bundle) -> bool:
    return bundle.timeline is not None and len(bundle.timeline.events) > 0


def has_torch_memory(bundle: Bundle) -> bool:
    return is_torch(bundle) and has_memory(bundle)


def torch_timeline(bundle: Bundle) -> Timeline:
    assert bundle.timeline is not None
    return bundle.timeline


# The data a page's widget is prepared with off the GUI thread (`Page.prepare`).


def overview_data(bundle: Bundle, _tables: Tables) -> page_data.OverviewData:
    return page_data.OverviewData.compute(torch_timeline(bundle))


def overview_first(bundle: Bundle, _tables: Tables) -> page_data.OverviewData:
    """The Overview without its findings (most of its cost on a big trace): what a load
    prepares when a tab opens on it; the findings are found once the page is drawn."""
    return page_data.OverviewData.compute(torch_timeline(bundle), findings=False)


def overview_derives(data: Any) -> dict[str, Any]:
    """The Recommendations page's list, once the Overview's findings are found."""
    if isinstance(data, page_data.OverviewData) and data.findings is not None:
        return {"recommendations": data.findings}
    return {}


def ops_data(bundle: Bundle, tables: Tables) -> page_data.OpsData:
    return page_data.OpsData.compute(torch_timeline(bundle), tables.get("operators"))


def kernels_data(bundle: Bundle, tables: Tables) -> page_data.KernelsData:
    return page_data.KernelsData.compute(torch_timeline(bundle), tables.get("kernels"))


def launch_delays_data(bundle: Bundle, tables: Tables) -> page_data.LaunchDelaysData:
    return page_data.LaunchDelaysData.compute(timeline(bundle), tables.get("launch-delays"))


def memory_data(bundle: Bundle, _tables: Tables) -> page_data.MemoryData:
    return page_data.MemoryData.compute(torch_timeline(bundle))


def recommendations_data(bundle: Bundle, _tables: Tables) -> list[recommend.Finding]:
    return recommend.recommendations(torch_timeline(bundle))


def what_if_edited(bundle: Bundle, edits: Sequence[str]) -> pd.DataFrame:
    """The what-if table under `edits`: a trace's replay, or a job's across its ranks. The
    modules are imported here, not with the registry (the window's start-up)."""
    if bundle.format == "job":
        views = importlib.import_module("perfview.core.analysis.torch.job_views")
        return views.what_if_table(job(bundle), edits)  # type: ignore[no-any-return]
    what_if = importlib.import_module("perfview.core.analysis.torch.critical_path.what_if")
    return what_if.what_if_table(timeline(bundle), edits)  # type: ignore[no-any-return]


def critical_path_data(bundle: Bundle, _tables: Tables) -> page_data.CriticalPathData:
    return page_data.CriticalPathData.compute(torch_timeline(bundle))
