"""What-if replay: change the graph's edge lengths, replay it, read the new step times.

An edit is text, so the CLI, the window and tests share one parser:

- `kernel:GLOB=F`    GPU kernels (and collectives) whose name matches the glob, duration × F
- `memcpy:GLOB=F`    memcpy / memset activities
- `cpu:GLOB=F`       CPU slices whose name matches, with everything nested in them, × F
- `category:NAME=F`  every edge of a path category (cpu_op, kernel, communication, …)
- `comm=F`, `data=F`, `launch=F`, `idle=F`  shorthands for those categories
- `all=F`            every edge (F = 0.5 predicts exactly half of every step)
- `sync:remove`      hosts no longer wait on the GPU at blocking calls (`sync:GLOB=remove`:
  only calls whose name matches); the time spent inside those calls goes too
- `overlap:comm`     work after a collective on its stream no longer waits for it to end

What the model ignores: contention (a shorter kernel does not make its neighbours slower or
faster), caching allocator and clock effects, and CPU threads waking each other (a thread's
idle time before it starts work stays as long as measured).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import I64, kind_mask, name_mask
from perfview.core.analysis.torch.critical_path import replay_batched
from perfview.core.analysis.torch.critical_path.context import with_descendants
from perfview.core.analysis.torch.critical_path.graph import (
    BUSY,
    CATEGORIES,
    CHAIN,
    COMM,
    STREAM,
    SYNC,
    SYNC_CAT,
    Graph,
)
from perfview.core.analysis.torch.critical_path.path import (
    StepLinks,
    breakdown,
    links_breakdown,
    measured_walk,
)
from perfview.core.model import Timeline
from perfview.core.model.errors import LoadError

SHORTHANDS = {"comm": "communication", "data": "data_loading", "launch": "launch", "idle": "idle"}
_EDIT_RE = re.compile(r"^(?P<target>[a-z_]+)(?::(?P<pattern>.*?))?(?:=(?P<value>[^=]*))?$")
HELP = (
    "an edit is kernel:GLOB=F, memcpy:GLOB=F, cpu:GLOB=F, category:NAME=F, comm=F, data=F, "
    "launch=F, idle=F, all=F, sync:remove, sync:GLOB=remove or overlap:comm"
)


class EditError(LoadError):
    """An edit the parser does not understand; `str()` is one user sentence."""


@dataclass(frozen=True)
class Edit:
    """One parsed edit: what it targets, the name pattern, and the factor (None: remove)."""

    target: str  # kernel, memcpy, cpu, category, all, sync, overlap
    pattern: str
    factor: float | None

    @classmethod
    def parse(cls, text: str) -> Edit:
        m = _EDIT_RE.match(text.strip())
        if m is None:
            raise EditError(f"cannot read the edit {text!r}: {HELP}")
        target, pattern, value = m["target"], m["pattern"], m["value"]
        if target in SHORTHANDS and pattern is None:
            target, pattern = "category", SHORTHANDS[target]
        if target == "sync" and value is None and pattern in ("remove", None):
            return cls("sync", "*", None)
        if target == "sync" and value == "remove":
            return cls("sync", pattern or "*", None)
        if target == "overlap" and pattern == "comm" and value is None:
            return cls("overlap", "comm", None)
        if target not in ("kernel", "memcpy", "cpu", "category", "all") or value is None:
            raise EditError(f"cannot read the edit {text!r}: {HELP}")
        if target == "category" and pattern not in CATEGORIES:
            raise EditError(
                f"unknown category {pattern!r} in {text!r}; one of {', '.join(CATEGORIES)}"
            )
        try:
            factor = float(value)
        except ValueError:
            raise EditError(f"the factor in {text!r} is not a number") from None
        if not np.isfinite(factor) or factor < 0:
            raise EditError(f"the factor in {text!r} must be a number >= 0")
        return cls(target, pattern or "*", factor)


def parse_edits(texts: Sequence[str]) -> list[Edit]:
    return [Edit.parse(t) for t in texts]


def _glob(pattern: str) -> str:
    """A shell glob (* and ?) as an anchored regex RE2 accepts (fnmatch's uses atomic groups,
    which pyarrow's string kernels refuse)."""
    return "^" + re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "$"


def edit_hits(tl: Timeline, edits: list[Edit]) -> list[np.ndarray | None]:
    """Per edit, the events it names (None: it names none by name), made once per replay:
    each batch's graph (`replay_batched`) reads them, never the events' names again."""
    ev = tl.events
    out: list[np.ndarray | None] = []
    for edit in edits:
        if edit.target in ("kernel", "memcpy"):
            kinds = ("kernel",) if edit.target == "kernel" else ("memcpy", "memset")
            out.append(kind_mask(ev, kinds) & name_mask(ev, _glob(edit.pattern)))
        elif edit.target == "cpu":
            out.append(with_descendants(tl, name_mask(ev, _glob(edit.pattern))))
        elif edit.target == "sync":
            out.append(name_mask(ev, _glob(edit.pattern)))
        else:
            out.append(None)
    return out


def edited_weights(
    tl: Timeline, graph: Graph, edits: list[Edit], hits: list[np.ndarray | None] | None = None
) -> np.ndarray:
    """The graph's weights with `edits` applied in order (NaN: the edge is removed); `hits`
    (`edit_hits`, made here when not given) are the events each edit names."""
    w = graph.weight.copy()
    label = graph.label
    named = label >= 0
    hits = edit_hits(tl, edits) if hits is None else hits
    for edit, hit in zip(edits, hits, strict=True):
        if edit.target == "all":
            w *= edit.factor
        elif edit.target == "category":
            w[graph.category == CATEGORIES.index(edit.pattern)] *= edit.factor
        elif edit.target in ("kernel", "memcpy"):
            assert hit is not None
            sel = (graph.etype == BUSY) & named
            sel[sel] = hit[label[sel]]
            w[sel] *= edit.factor
        elif edit.target == "cpu":
            assert hit is not None
            sel = (graph.etype == CHAIN) & named
            sel[sel] = hit[label[sel]]
            w[sel] *= edit.factor
        elif edit.target == "sync":
            assert hit is not None
            sel = (graph.etype == SYNC) & named
            sel[sel] = hit[label[sel]]
            w[sel] = np.nan
            inside = (graph.etype == CHAIN) & (graph.category == SYNC_CAT) & named
            inside[inside] = hit[label[inside]]
            w[inside] = 0.0
        elif edit.target == "overlap":
            _overlap_comm(graph, w)
    return w


def _overlap_comm(graph: Graph, w: np.ndarray) -> None:
    """Stream-order edges out of a collective start from its start instead of its end: the
    edge's length less the collective's (edited) duration, since its end = start + that."""
    busy = np.flatnonzero((graph.etype == BUSY) & (graph.category == COMM))
    length = np.full(len(graph.time), np.nan)
    length[graph.dst[busy]] = w[busy]
    out = (graph.etype == STREAM) & np.isfinite(length[graph.src])
    w[out] = w[out] - length[graph.src[out]]


@dataclass(frozen=True)
class Prediction:
    """A replay under edits, made batch by batch (`replay_batched`): each step's measured and
    predicted time and path, and every slice's replayed times (`timeline`)."""

    rows: np.ndarray  # the graph's event rows (`Context.rows`)
    time: np.ndarray  # float64 replayed ns per node (2j, 2j + 1 for rows[j]; the root last)
    measured: pd.DataFrame  # step, start_ns, end_ns: each step's measured path's span
    predicted: list[StepLinks]

    def table(self) -> pd.DataFrame:
        """step, measured_ns, predicted_ns, speedup (measured / predicted)."""
        m = (self.measured["end_ns"] - self.measured["start_ns"]).to_numpy(np.float64)
        q = np.asarray([p.end - p.start for p in self.predicted], np.float64)
        return pd.DataFrame({
            "step": self.measured["step"].to_numpy(),
            "measured_ns": np.rint(m).astype(I64),
            "predicted_ns": np.rint(q).astype(I64),
            "speedup": np.where(q > 0, m / np.where(q > 0, q, 1), np.nan),
        })  # fmt: skip

    def timeline(self, tl: Timeline, step: int) -> pd.DataFrame:
        """The predicted timeline of one step: row, lane, measured start/end and predicted
        start/end (ns) of every slice and GPU activity that overlaps the measured step."""
        i = self.measured["step"].tolist().index(step)
        lo, hi = self.measured["start_ns"].iat[i], self.measured["end_ns"].iat[i]
        ev = tl.events
        rows = self.rows
        begin = ev["ts"].to_numpy(dtype=I64)[rows]
        end = begin + ev["dur"].to_numpy(dtype=I64)[rows]
        keep = np.flatnonzero((end >= lo) & (begin <= hi))
        return pd.DataFrame({
            "row": rows[keep],
            "lane": ev["lane"].to_numpy()[rows[keep]].astype(I64),
            "start_ns": begin[keep],
            "end_ns": end[keep],
            "predicted_start_ns": np.rint(self.time[2 * keep]).astype(I64),
            "predicted_end_ns": np.rint(self.time[2 * keep + 1]).astype(I64),
        })  # fmt: skip


def predict(tl: Timeline, edits: list[Edit], batch_bytes: int | None = None) -> Prediction:
    """Replay the trace under `edits`, batch by batch (`replay_batched`: the graph of one
    batch of steps at a time; the same times and paths as the whole trace's graph)."""
    hits = edit_hits(tl, edits)
    carried, _steps, predicted = replay_batched.replayed(
        tl, lambda graph: edited_weights(tl, graph, edits, hits), batch_bytes
    )
    measured = [(p.step, p.start, p.end) for p in measured_walk(tl).links]  # steps_of's
    spans = pd.DataFrame(measured, columns=["step", "start_ns", "end_ns"])
    return Prediction(carried.rows, carried.t, spans, predicted)


def what_if_table(tl: Timeline, edits: Sequence[str]) -> pd.DataFrame:
    """`perfview summary --view what-if --edit …`: step, measured_ns, predicted_ns, speedup."""
    return predict(tl, parse_edits(edits)).table()


def what_if_path(tl: Timeline, edits: Sequence[str]) -> pd.DataFrame:
    """The predicted critical path's breakdown (the critical-path table's columns)."""
    return links_breakdown(tl, predict(tl, parse_edits(edits)).predicted)


__all__ = [
    "HELP",
    "Edit",
    "EditError",
    "Prediction",
    "breakdown",
    "edit_hits",
    "edited_weights",
    "links_breakdown",
    "parse_edits",
    "predict",
    "what_if_path",
    "what_if_table",
]
