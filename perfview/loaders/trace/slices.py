"""The slices of a trace: X events, B/E pairs per thread, async pairs per (pid, cat, id, name).

Pairing is vectorised (`core.intervals.pair_begin_end`): begins and ends sorted by their
group, time and file order, matched as a stack per group would. Begins left open are closed
at the end of the trace; stray ends are dropped (each with a warning).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import pandas as pd

from perfview.core.analysis import intervals
from perfview.loaders.trace.columns import Columns

I64 = np.int64
SUPPORTED = frozenset("XBEiICMstfbenSTFpR")
ASYNC_TID = -(2**40)  # async track k of a process gets tid ASYNC_TID - k
# np.take's mode for the gathers into a slice of a column made here: every row gathered was
# found in that column, so none is out of range, and the default ("raise") first gathers
# into a buffer of its own, then copies (0.14 s against 0.06 s for 34M rows, more in fresh
# pages); "clip" writes in place
_ROWS: Final = "clip"


class Phases:
    """Masks of events by phase letter."""

    def __init__(self, cols: Columns) -> None:
        code = cols.cat_all("ph")  # int32 codes: half the bytes to gather
        self.values = cols.phs.values
        # a byte an event where the phases are few (always, but in odd files): the
        # column's own rows can then go at once (`copied`), 3 bytes an event fewer
        self.copied = len(self.values) < 128 and code.dtype.itemsize > 1
        self.code = code.astype(np.int8) if self.copied else code
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

    Returns event indices: (begins, their ends, begins left open, stray ends). The groups
    are sorted by one int64 key (`_group_key`, ordered as the keys are) and time: a 2-key
    sort where one sort per key was 3-5, and the sorted key tells where a group changes.
    """
    key = _group_key(keys, idx)
    if key is None:  # the keys' ranges multiplied pass 2**62: one sort per key
        order = np.lexsort((idx, ts[idx], *[k[idx] for k in reversed(keys)]))
        sidx = idx[order]
        change = np.zeros(len(sidx), dtype=bool)
        if len(sidx):
            change[0] = True
            for k in keys:
                kv = k[sidx]
                change[1:] |= kv[1:] != kv[:-1]
        group = np.cumsum(change)
    else:
        order = np.lexsort((ts[idx], key))  # stable: file order within a time
        sidx = idx[order]
        group = key[order]
    del order
    b, e, o, s = intervals.pair_begin_end(group, is_begin[sidx])
    return sidx[b], sidx[e], sidx[o], sidx[s]


def _group_key(keys: list[np.ndarray], idx: np.ndarray) -> np.ndarray | None:
    """One int64 per event of `idx` that sorts as the tuple of `keys` does (each column
    offset by its least value, or, where its values spread wider than their number, by
    its rank among them); None when the ranges multiplied would not fit."""
    out = np.zeros(len(idx), dtype=I64)
    if len(idx) == 0:
        return out
    total = 1  # out < total: out * size + code < total * size
    for column in keys:
        values = column[idx]
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < 2 * len(values) + 1024:
            code = values.astype(I64) - lo
            size = hi - lo + 1
        else:  # sparse ids (pids, tids): their ranks, found by hashing, not sorting
            first, uniq = pd.factorize(values, sort=False)
            rank = np.empty(len(uniq), dtype=I64)
            rank[np.argsort(np.asarray(uniq), kind="stable")] = np.arange(len(uniq), dtype=I64)
            code = rank[first]
            size = len(uniq)
        del values
        total *= size
        if total > 2**62:
            return None
        out *= size
        out += code
    return out


@dataclass
class Slices:
    """The slices as found: X, then B/E pairs, then begins left open, then async slices.

    A slice's pid is its event's (`src`), and so is a sync slice's tid: only the async
    slices' tids (their track's) are kept (`async_tid`), not a pid and a tid per slice
    (16 bytes a slice, 75 MB at 1 GB, alive from here to the lanes: `keys`)."""

    src: np.ndarray  # event index that gives name, cat and args
    start: np.ndarray
    end: np.ndarray
    is_async: np.ndarray
    async_tid: np.ndarray  # the async slices' (the last rows') tids: ASYNC_TID - track

    def keys(
        self, pid: np.ndarray, tid: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(pid, tid) of the slices `rows`, from the events' `pid` and `tid` columns."""
        first_async = len(self.src) - len(self.async_tid)
        events = self.src[rows]
        out_tid = tid[events]
        is_async = rows >= first_async
        out_tid[is_async] = self.async_tid[rows[is_async] - first_async]
        return pid[events], out_tid

    def key_columns(
        self, pid: np.ndarray, tid: np.ndarray, extra: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(pid, tid) of every slice, then of the events `extra`, each one array made once
        (`keys` of them all, without its temporaries)."""
        n_sl, n_sync = len(self.src), len(self.src) - len(self.async_tid)
        out_pid = np.empty(n_sl + len(extra), dtype=pid.dtype)
        out_tid = np.empty(n_sl + len(extra), dtype=I64)
        np.take(pid, self.src, out=out_pid[:n_sl], mode=_ROWS)
        np.take(pid, extra, out=out_pid[n_sl:], mode=_ROWS)
        np.take(tid, self.src[:n_sync], out=out_tid[:n_sync], mode=_ROWS)
        out_tid[n_sync:n_sl] = self.async_tid
        np.take(tid, extra, out=out_tid[n_sl:], mode=_ROWS)
        return out_pid, out_tid


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
    codes, first_names = pd.factorize(name[a_src])  # one track per (pid, name)
    track = np.asarray(codes, dtype=I64)
    del codes
    parts = [x, b, open_b, a_src]
    n_sync = len(x) + len(b) + len(open_b)
    # one array, no copy where only X slices were found
    src = x if len(x) == n_sync + len(a_src) else np.concatenate(parts)
    start = ts[src]
    end = np.empty(len(src), dtype=I64)
    # an X slice's end: its start plus its duration
    np.take(dur, x, out=end[: len(x)], mode=_ROWS)
    end[: len(x)] += start[: len(x)]
    at = len(x)
    for rows, at_end in ((e, False), (open_b, True), (a_e, False), (a_open, True)):
        part = end[at : at + len(rows)]
        np.take(ts, rows, out=part, mode=_ROWS)
        if at_end:
            np.maximum(part, trace_end, out=part)
        at += len(rows)
    counts.update(slices=n_sync, closed_at_end=len(open_b), **{"async": len(a_src)})
    tracks = {  # first appearance order, as the tracks are numbered
        int(ASYNC_TID - k): cols.names.values[int(c)] for k, c in enumerate(first_names.tolist())
    }
    sl = Slices(
        src=src,
        start=start,
        end=end,
        is_async=_after(len(src), n_sync),
        async_tid=ASYNC_TID - track,
    )
    return sl, tracks


def _after(n: int, first: int) -> np.ndarray:
    """Boolean mask of rows `first`..n-1 (an index array compared would be 8x the bytes)."""
    mask = np.zeros(n, dtype=bool)
    mask[first:] = True
    return mask


__all__ = ["ASYNC_TID", "SUPPORTED", "Phases", "Slices", "slices"]
