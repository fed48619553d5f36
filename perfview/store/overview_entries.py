"""The Overview page's data cached beside a trace's parsed columns, so a reopened big trace
draws its first page without analysing it again.

Its findings (`recommend.recommendations`, ~1 s of CPU at 1 GB, found by a worker once the
page is drawn) are a second entry, written once they are found: a reopen then shows the
whole page at once, and no worker analyses the trace while the user's first clicks are drawn
(that worker held the GIL beside the Timeline's first paint: 60-97 ms gaps on reopen).

On a 1 GB trace the Overview's tables (`core.pages.data.OverviewData`, without its findings,
as a load prepares it) cost 0.2-1.5 s of CPU, more than reading the columns back; what they
come to is a few small tables. They are stored as JSON in a verified folder
(`store.artifacts`) next to the columns' entry, keyed like the layout (`layout_entries`): the
columns' key plus a digest of the analysis code. Only tables that come back exactly equal
(values, dtypes, index) are stored at all: each is read back and compared before it is written,
so an odd column is computed again on the next open rather than shown changed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd

from perfview.core.analysis.torch import overview, recommend
from perfview.core.analysis.torch.findings import Finding
from perfview.core.analysis.torch.no_steps import NoStepsData
from perfview.core.model import Bundle, Timeline
from perfview.core.pages.data import OverviewData
from perfview.store import artifacts, layout_entries, parsed_columns, write_gates
from perfview.store.derived_entries import DerivedCache

log = logging.getLogger(__name__)
SUFFIX = "overview"
FINDINGS_SUFFIX = "findings"


class NotExact(ValueError):
    """A table that would not come back from JSON exactly as it is."""


@functools.cache
def code_id() -> str:
    """A digest of the code the Overview's data comes from (the analysis package, the page
    data and this module); `parsed_columns.build_id`, in the columns' key, covers the tables."""
    code = hashlib.blake2b(parsed_columns.build_id().encode(), digest_size=8)
    core = Path(overview.__file__).resolve().parent.parent.parent
    sources = [*sorted((core / "analysis").rglob("*.py")), core / "pages" / "data.py"]
    for source in [*sources, Path(__file__).resolve()]:
        with contextlib.suppress(OSError):  # a frozen build without sources: the build id
            code.update(source.name.encode() + b"\0" + source.read_bytes())
    return code.hexdigest()


def entry_for(path: Path) -> Path:
    return parsed_columns.cache_dir() / f"{parsed_columns.key(path)}-{SUFFIX}-{code_id()}"


def findings_entry_for(path: Path) -> Path:
    return parsed_columns.cache_dir() / f"{parsed_columns.key(path)}-{FINDINGS_SUFFIX}-{code_id()}"


def overview_data(bundle: Bundle, gate: write_gates.WriteGate = write_gates.NOW) -> OverviewData:
    """`OverviewData.compute(findings=False)` of `bundle`: from the cache when it holds it,
    else computed and stored in the background (once `gate` opens); with its findings
    when the cache holds those too (a reopen: nothing left for `with_findings`)."""
    timeline = bundle.timeline
    assert timeline is not None
    if not layout_entries.cacheable(bundle):
        return OverviewData.compute(timeline, findings=False)
    path = Path(bundle.path)
    compute = functools.partial(OverviewData.compute, timeline, findings=False)
    data = _CACHE.get_or_compute(path, timeline, compute, gate)
    found = _FINDINGS.get(path, timeline)
    return data if found is None else dataclasses.replace(data, findings=found)


def with_findings(
    bundle: Bundle, data: OverviewData, gate: write_gates.WriteGate = write_gates.NOW
) -> OverviewData:
    """`data.with_findings`: from the cache when it holds them, else found and stored in the
    background (once `gate` opens)."""
    timeline = bundle.timeline
    assert timeline is not None
    if data.findings is not None or not layout_entries.cacheable(bundle):
        return data.with_findings(timeline)
    find = functools.partial(recommend.recommendations, timeline)
    found = _FINDINGS.get_or_compute(Path(bundle.path), timeline, find, gate)
    return dataclasses.replace(data, findings=found)


def _checked_meta(entry: Path, timeline: Timeline) -> dict[str, Any]:
    """`entry`'s metadata, checked against this code and `timeline` (raises on anything odd)."""
    meta = artifacts.open_folder(entry, verify=parsed_columns.verifying()).meta
    if meta.get("code") != code_id():
        raise ValueError("computed by other code")
    if meta.get("fingerprint") != layout_entries.fingerprint(timeline):
        raise ValueError("computed from other tables")
    return meta


def _read(entry: Path, timeline: Timeline) -> OverviewData:
    return _unpack(_checked_meta(entry, timeline)["data"])


def _write(entry: Path, data: OverviewData, timeline: Timeline) -> None:
    """Store `data` without findings (NotExact, a ValueError: a table that would not
    round-trip exactly, so nothing is stored)."""
    packed = _pack(data)
    meta = {"code": code_id(), "fingerprint": layout_entries.fingerprint(timeline)}
    artifacts.write_folder(entry, {}, {}, {**meta, "data": packed})


def _read_findings(entry: Path, timeline: Timeline) -> list[Finding]:
    return findings_from_json(_checked_meta(entry, timeline)["findings"])


def _write_findings(entry: Path, found: list[Finding], timeline: Timeline) -> None:
    meta = {"code": code_id(), "fingerprint": layout_entries.fingerprint(timeline)}
    artifacts.write_folder(entry, {}, {}, {**meta, "findings": findings_to_json(found)})


_CACHE: DerivedCache[OverviewData] = DerivedCache("overview data", entry_for, _read, _write)
_FINDINGS: DerivedCache[list[Finding]] = DerivedCache(
    "findings", findings_entry_for, _read_findings, _write_findings
)
get, put, put_later = _CACHE.get, _CACHE.put, _CACHE.put_later
flush = write_gates.flush  # waits for the background writes (tests, benchmarks)


def frame_to_json(frame: pd.DataFrame) -> dict[str, Any]:
    """A small table as JSON-able data; raises NotExact unless it reads back identical."""
    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0:
        raise NotExact("index")
    if frame.index.step != 1 or not all(isinstance(c, str) for c in frame.columns):
        raise NotExact("index or column names")
    doc: dict[str, Any] = {
        "columns": list(frame.columns),
        "dtypes": [str(t) for t in frame.dtypes],
        "values": [frame[c].tolist() for c in frame.columns],
    }
    doc = json.loads(json.dumps(doc))  # compared after the trip through JSON text it takes
    back = frame_from_json(doc)
    if not (back.equals(frame) and list(back.dtypes) == list(frame.dtypes)):
        raise NotExact("values or dtypes")
    return doc


def findings_to_json(found: list[Finding]) -> list[dict[str, Any]]:
    """Findings as JSON-able data; raises NotExact unless they read back equal (a NaN
    metric, for one, never does: such findings are found again on the next open)."""
    packed = [{**dataclasses.asdict(f), "rows": [int(r) for r in f.rows]} for f in found]
    doc: list[dict[str, Any]] = json.loads(json.dumps(packed, allow_nan=False))
    if findings_from_json(doc) != found:
        raise NotExact("findings")
    return doc


def findings_from_json(doc: list[dict[str, Any]]) -> list[Finding]:
    return [Finding(**{**item, "rows": tuple(item["rows"])}) for item in doc]


def frame_from_json(doc: dict[str, Any]) -> pd.DataFrame:
    columns = {
        name: pd.Series(values, dtype=dtype)
        for name, dtype, values in zip(doc["columns"], doc["dtypes"], doc["values"], strict=True)
    }
    return pd.DataFrame(columns, columns=list(doc["columns"]))


def _pack(data: OverviewData) -> dict[str, Any]:
    if data.findings is not None:
        raise NotExact("findings are an entry of their own")  # the first page's data, as loaded
    no_steps = data.no_steps
    return {
        "devices": frame_to_json(data.devices),
        "stats": dataclasses.asdict(data.stats),
        "steps": frame_to_json(data.steps),
        "utilization": frame_to_json(data.utilization),
        "no_steps": None
        if no_steps is None
        else {
            "steps": frame_to_json(no_steps.steps),
            "operators": frame_to_json(no_steps.operators),
            "python": frame_to_json(no_steps.python),
            "hint": no_steps.hint,
        },
    }


def _unpack(doc: dict[str, Any]) -> OverviewData:
    ns = doc["no_steps"]
    return OverviewData(
        frame_from_json(doc["devices"]),
        overview.StepStats(**doc["stats"]),
        frame_from_json(doc["steps"]),
        frame_from_json(doc["utilization"]),
        None,
        None
        if ns is None
        else NoStepsData(
            frame_from_json(ns["steps"]),
            frame_from_json(ns["operators"]),
            frame_from_json(ns["python"]),
            str(ns["hint"]),
        ),
    )


__all__ = [
    "NotExact",
    "code_id",
    "entry_for",
    "findings_entry_for",
    "findings_from_json",
    "findings_to_json",
    "flush",
    "frame_from_json",
    "frame_to_json",
    "get",
    "overview_data",
    "put",
    "put_later",
    "with_findings",
]
