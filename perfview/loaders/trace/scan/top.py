"""Compiled reading of a trace's top-level object: where traceEvents is, and the other members.

The scanner path needs the top level's small members (deviceProperties, baseTimeNanoseconds,
…) and the position of the events array; `members` finds both in one validating pass, from
the object's '{' and again after the array, without decoding the events.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.trace.scan.events import ODD, TRUNC
from perfview.loaders.trace.scan.keys import key_table, match_key
from perfview.loaders.trace.scan.tokens import MAX_DEPTH, skip_value, skip_ws, string

TOP_FOUND, TOP_DONE = 0, 1  # `members` statuses besides ODD / TRUNC
TRACE_EVENTS = key_table(["traceEvents"])


@njit(cache=True, nogil=True)
def members(buf: np.ndarray, i: int, first: bool, out: np.ndarray) -> tuple[int, int, int]:
    """Members of the top-level object: from its '{' when `first`, else just after the
    traceEvents value. Rows of `out` get (key start, key end, value start, value end) of each
    member (key without quotes). Returns (status, position, members written):
    TOP_FOUND: the traceEvents array starts at position; TOP_DONE: the object closed and only
    whitespace follows; ODD / TRUNC otherwise (too many members, an escaped key, bad JSON).
    """
    n = len(buf)
    stack = np.empty(MAX_DEPTH, dtype=np.uint8)
    count = 0
    after_value = not first  # expecting ',' or '}' (else a key, or '}' of an empty object)
    if first:
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            after_value = True
    while True:
        if after_value:
            i = skip_ws(buf, i, n)
            if i >= n:
                return TRUNC, i, count
            if buf[i] == 125:
                i = skip_ws(buf, i + 1, n)
                return (TOP_DONE if i >= n else ODD), i, count
            if buf[i] != 44:
                return ODD, i, count
            i = skip_ws(buf, i + 1, n)
        after_value = True
        if i >= n:
            return TRUNC, i, count
        if buf[i] != 34 or count >= out.shape[0]:
            return ODD, i, count
        ks = i + 1
        i, kf = string(buf, i, n)
        if i < 0:
            return (TRUNC if i == -2 else ODD), ks, count
        ke = i - 1
        if kf & 1:
            return ODD, ks, count
        i = skip_ws(buf, i, n)
        if i >= n or buf[i] != 58:
            return (TRUNC if i >= n else ODD), i, count
        i = skip_ws(buf, i + 1, n)
        if i >= n:
            return TRUNC, i, count
        if match_key(buf, ks, ke - ks, n, TRACE_EVENTS) == 0:
            return (TOP_FOUND if buf[i] == 91 else ODD), i, count
        vs = i
        i = skip_value(buf, i, n, stack)
        if i < 0:
            return (TRUNC if i == -2 else ODD), vs, count
        out[count, 0] = ks
        out[count, 1] = ke
        out[count, 2] = vs
        out[count, 3] = i
        count += 1


__all__ = ["TOP_DONE", "TOP_FOUND", "members"]
