"""Hand-offs between CPU threads of one process: where one thread waits for another.

The autograd engine runs backward on its own thread while the main thread waits inside
`loss.backward()` (often only a user annotation such as "## backward ##" is open there); a
DataLoader's pin-memory thread hands batches to the main thread. Without edges between
threads the main thread's wait would be charged to whatever slice it was waiting in. Two kinds
of edges, restricted to what such waits look like in a trace:

- join: a top-level slice of thread B ends while thread A is in a stretch where no operator is
  open (only an annotation, or nothing): A's next begin/end point may have waited for it;
- wake: a top-level slice of thread B begins after B was idle (no slice open): it may have been
  started by the latest begin/end point of another thread since B went idle.

Like every edge of the graph these are exact for the measured trace (length = the time between
the two points); the replay makes one binding only where its source came last.
"""

from __future__ import annotations

import numpy as np

from perfview.core.analysis.torch.common import I64, kind_mask
from perfview.core.model import Timeline


def hand_offs(
    tl: Timeline,
    node: np.ndarray,
    is_end: np.ndarray,
    row: np.ndarray,
    lane: np.ndarray,
    time: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) node pairs of join and wake edges. The inputs are the CPU threads' begin/end
    points sorted by lane, then time (as the thread-order chain is built): node, whether it is
    an end, its slice's event row, its lane; `time` is indexed by node."""
    ev = tl.events
    if len(np.unique(lane)) < 2:
        return np.zeros(0, I64), np.zeros(0, I64)
    t = time[node]
    depth = ev["depth"].to_numpy()[row]
    parent = ev["parent"].to_numpy(dtype=I64)
    inner = np.where(is_end, parent[row], row)  # innermost open slice after each point
    operator = kind_mask(ev, ("cpu_op", "runtime", "python", "comm"))
    waiting = np.ones(len(node), bool)  # after this point, no operator is open on its thread
    has = inner >= 0
    waiting[has] = ~operator[inner[has]]
    pid = ev["pid"].to_numpy(dtype=I64)[row]
    first = np.ones(len(node), bool)
    first[1:] = lane[1:] != lane[:-1]
    idle_before = np.zeros(len(node), bool)  # a begin whose thread had no slice open before
    idle_before[1:] = inner[:-1] < 0
    idle_before |= first
    task_end = is_end & (depth == 0)
    task_begin = ~is_end & (depth == 0) & idle_before
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    for ln in np.unique(lane).tolist():
        lo, hi = np.searchsorted(lane, [ln, ln + 1])
        if hi - lo < 2:
            continue
        ta = t[lo:hi]
        same_pid = pid == pid[lo]
        # joins: a task end elsewhere inside one of this thread's waiting stretches
        ends = np.flatnonzero(task_end & (lane != ln) & same_pid)
        k = np.searchsorted(ta, t[ends], side="left") - 1  # stretch [ta[k], ta[k + 1])
        ok = (k >= 0) & (k < hi - lo - 1)
        kk = np.clip(k, 0, hi - lo - 2)
        ok &= waiting[lo + kk]
        src.append(node[ends[ok]])
        dst.append(node[lo + kk[ok] + 1])
        # wakes: the latest point of this thread before a task that began after idling
        begins = np.flatnonzero(task_begin & (lane != ln) & same_pid)
        j = np.searchsorted(ta, t[begins], side="right") - 1
        prev = np.where(first[begins], np.iinfo(I64).min, t[np.maximum(begins - 1, 0)])
        ok = (j >= 0) & (ta[np.clip(j, 0, None)] > prev)
        src.append(node[lo + j[ok]])
        dst.append(node[begins[ok]])
    return np.concatenate(src).astype(I64), np.concatenate(dst).astype(I64)


__all__ = ["hand_offs"]
