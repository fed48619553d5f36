"""The slices of a trace: X events, B/E pairs per thread, async pairs per (pid, cat, id, name).

Pairing is vectorised (`core.intervals.pair_begin_end`): begins and ends sorted by their
group, time and file order, matched as a stack per group would. Begins left open are closed
at the end of the trace; stray ends are dropped (each with a warning).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from perfview.core.analysis import intervals
from perfview.loaders.trace.columns import Columns

I64 = np.int64
SUPPORTED = frozenset("XBEiICMstfbenSTFpR")
ASYNC_TID = -(2**40)  # async track k of a process gets tid ASYNC_TID - k


class Phases:
    """Masks of events by phase letter."""

    def __init__(self, cols: Columns) -> None:
        self.code = cols.cat_all("ph")  # int32 codes: half the bytes to gather
        self.values = cols.phs.values
        self._masks: dict[str, np.ndarray] = {}

    def __call__(self, chars: str) -> np.ndarray:
        """Read-only mask of the events whose phase is in `chars` (memoised: build asks for
        the same few sets many times, and each is a pass over every event)."""
        mask = self._masks.get(chars)
        if mask is None:
            hits = [k for k, p in enumerate(self.values) if isinstance(p, str) and p and p in chars]
            if len(hits) <= 3:  # a few compares beat a gather (which first widens the codes)
                mask = np.zeros(len(self.code), dtype=bool)
                for k in hits:
                    mask |= self.code == k
            else:
                lut = np.zeros(len(self.values), dtype=bool)
                lut[hits] = True
                mask = lut[self.code]
            mask.flags.writeable = False
            self._masks[chars] = mask
        return mask

    def forget(self) -> None:
        """Drop the memoised masks (a byte an event each): the stages that asked for the
        same sets many times are over; a later ask makes its mask again."""
        self._masks.clear()

    def unsupported(self) -> dict[str, int]:
        counts = np.bincount(self.code, minlength=len(self.values)).tolist()
        return {
            str(v): int(c)
            for v, c in zip(self.values, counts, strict=False)
            if c and not (isinstance(v, str) and len(v) == 1 and v in SUPPORTED)
        }


def _pairs(
    keys: list[np.ndarray], ts: np.ndarray, idx: np.ndarray, is_begin: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pair begins/ends among events `idx` grouped by `keys`, in time then file order.

    Returns event indices: (begins, their ends, begins left open, stray ends).
    """
    order = np.lexsort((idx, ts[idx], *[k[idx] for k in reversed(keys)]))
    sidx = idx[order]
    change = np.zeros(len(sidx), dtype=bool)
    if len(sidx):
        change[0] = True
        for k in keys:
            kv = k[sidx]
            change[1:] |= kv[1:] != kv[:-1]
    b, e, o, s = intervals.pair_begin_end(np.cumsum(change), is_begin[sidx])
    return sidx[b], sidx[e], sidx[o], sidx[s]


@dataclass
class Slices:
    src: np.ndarray  # event index that gives name, cat and args
    pid: np.ndarray
    tid: np.ndarray
    start: np.ndarray
    end: np.ndarray
    is_async: np.ndarray


def slices(
    ph: Phases, cols: Columns, ts: np.ndarray, dur: np.ndarray, ok: np.ndarray, trace_end: int,
    pid: np.ndarray, tid: np.ndarray, name: np.ndarray, cat: np.ndarray, warnings: list[str],
    counts: dict[str, int],
) -> tuple[Slices, dict[int, object]]:  # fmt: skip
    """X slices, B/E pairs per thread and async pairs per (pid, cat, id, name). `name`,
    `cat` and the flow ids are interner codes of any integer type (not widened: a widening
    copy of a 5M-event column is 40 MB of fresh pages)."""
    fid = cols.cat_all("fid")
    x = np.flatnonzero(ph("X") & ok)
    b, e, open_b, stray = _pairs([pid, tid], ts, np.flatnonzero(ph("BE") & ok), ph("B"))
    if len(open_b):
        warnings.append(f"closed {len(open_b):,} slices left open at the end of the trace")
    if len(stray):
        warnings.append(f"dropped {len(stray):,} end events (E) that match no begin (B)")
    akeys = [pid, cat, fid, name]
    ab, ae, ao, astray = _pairs(akeys, ts, np.flatnonzero(ph("be") & ok), ph("b"))
    lb, le, lo, lstray = _pairs(akeys, ts, np.flatnonzero(ph("SF") & ok), ph("S"))
    a_b, a_e, a_open = np.concatenate([ab, lb]), np.concatenate([ae, le]), np.concatenate([ao, lo])
    if len(a_open):
        warnings.append(f"closed {len(a_open):,} async slices left open at the end of the trace")
    if len(astray) + len(lstray):
        warnings.append(
            f"dropped {len(astray) + len(lstray):,} async end events that match no begin"
        )
    a_src = np.concatenate([a_b, a_open])
    track = np.asarray(pd.factorize(name[a_src])[0], dtype=I64)  # one track per (pid, name)
    sync = np.concatenate([x, b, open_b])
    src = np.concatenate([sync, a_src])
    end = np.concatenate(
        [ts[x] + dur[x], ts[e], np.maximum(ts[open_b], trace_end), ts[a_e],
         np.maximum(ts[a_open], trace_end)]
    )  # fmt: skip
    counts.update(slices=len(sync), closed_at_end=len(open_b), **{"async": len(a_src)})
    tracks = {
        int(ASYNC_TID - k): cols.names.values[int(name[s])]
        for k, s in zip(track.tolist(), a_src.tolist(), strict=True)
    }
    sl = Slices(
        src=src,
        pid=pid[src],
        tid=np.concatenate([tid[sync], ASYNC_TID - track]),
        start=ts[src],
        end=end,
        is_async=_after(len(src), len(sync)),
    )
    return sl, tracks


def _after(n: int, first: int) -> np.ndarray:
    """Boolean mask of rows `first`..n-1 (an index array compared would be 8x the bytes)."""
    mask = np.zeros(n, dtype=bool)
    mask[first:] = True
    return mask


__all__ = ["ASYNC_TID", "SUPPORTED", "Phases", "Slices", "slices"]
