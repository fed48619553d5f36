"""Scanning a trace while it downloads (`perfview.streamed`): where the bytes that arrived end.

The scanner reads only what arrived (`buf[:have]`), so the end of that part looks like the end
of a file cut short: the scanner stops there with TRUNC (or ODD: a value cut inside a literal).
These functions tell that apart from a file that really is cut or odd, wait for the next
piece, and say where the scanner goes on: at the cut event's '{' (its row was not written, its
strings not interned: nothing is scanned twice), or after the separator it had reached. Only
the bytes around the stop are looked at, so the columns equal those of the whole file's scan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from perfview.loaders.trace.scan import events as ts
from perfview.loaders.trace.scan import top as top_level

if TYPE_CHECKING:
    from perfview.streamed import Arriving

MORE = -1  # `resume`: scan on from the position it gives
_WS = b" \t\r\n"
_LOOK = 64 * 1024  # bytes looked at per step when skipping whitespace
_OPEN, _CLOSE, _COMMA, _END, _START = ord("["), ord("]"), ord(","), ord("}"), ord("{")


def members(
    arr: np.ndarray, i: int, out: np.ndarray, arriving: Arriving | None
) -> tuple[int, int, int]:
    """`top.members` from the top-level '{' at `i`, once enough of the file arrived to find
    the events array (what arrived doubling between tries: a huge member before the events
    is read a few times, not once per piece)."""
    while arriving is not None and arriving.have < arriving.size:
        have = arriving.have
        status, pos, count = top_level.members(arr[:have], i, True, out)
        if status not in (ts.TRUNC, ts.ODD):
            return status, pos, count
        if arriving.wait(max(have + 1, 2 * have), consumed=i) == have:
            return ts.ODD, i, 0  # woken: the load was cancelled
    return top_level.members(arr, i, True, out)  # type: ignore[no-any-return]


def resume(
    buf: np.ndarray, have: int, arriving: Arriving, status: int, pos: int, first: bool
) -> tuple[int, int, bool]:
    """After the scanner stopped with TRUNC or ODD at `pos` on the `have` bytes that arrived:
    (MORE, where to scan on, `first`) once more bytes arrived, or the scanner's own verdict
    (status, pos, first) when the file really is odd there."""
    if pos < have:
        if buf[pos] != _START:
            return status, pos, first  # a byte that arrived was refused
        before = _last_non_ws(buf, pos)
        if before < 0 or buf[before] not in (_COMMA, _OPEN):
            return status, pos, first  # '{' right after a value: odd, not cut
        arriving.wait(have + 1, consumed=pos)
        return MORE, pos, False  # the event at `pos` was cut: read it again, whole
    last = _last_non_ws(buf, have)  # what arrived ends in whitespace after `last`
    if last < 0:
        return status, pos, first
    if buf[last] == _OPEN:  # the array's '[': scan from it again
        arriving.wait(have + 1, consumed=pos)
        return MORE, last, True
    if buf[last] not in (_COMMA, _END):
        return status, pos, first
    at, have = _next_arrived(buf, last + 1, have, arriving, pos)
    if at >= have:  # the file ends there: the whole file's verdict is the same
        return status, pos, first
    if buf[last] == _END:  # after an event: its separator arrived now
        if buf[at] == _CLOSE:
            return ts.END, at + 1, False
        if buf[at] != _COMMA:
            return ts.ODD, at, False
        last = at
        at, have = _next_arrived(buf, last + 1, have, arriving, pos)
        if at >= have:
            return ts.TRUNC, at, False
    if buf[at] != _START:  # ',]' or ',x': as the scanner says of the whole file
        return ts.ODD, at, False
    return MORE, at, False


def _next_arrived(
    buf: np.ndarray, start: int, have: int, arriving: Arriving, consumed: int
) -> tuple[int, int]:
    """The first byte after `start` that is not whitespace, waiting for the pieces that
    bring it; (position, bytes arrived), the position `have` when the file ends first."""
    while True:
        at = _next_non_ws(buf, start, have)
        if at < have or have >= arriving.size:
            return at, have
        start, before = have, have
        have = arriving.wait(have + 1, consumed=consumed)
        if have == before:  # woken: the load was cancelled (its stop ends the scan)
            return have, have


def _last_non_ws(buf: np.ndarray, end: int) -> int:
    """The position of the last byte before `end` that is not whitespace, or -1."""
    k = end
    while k > 0:
        lo = max(0, k - _LOOK)
        kept = bytes(buf[lo:k]).rstrip(_WS)
        if kept:
            return lo + len(kept) - 1
        k = lo
    return -1


def _next_non_ws(buf: np.ndarray, start: int, end: int) -> int:
    """The position of the first byte from `start` that is not whitespace, or `end`."""
    k = start
    while k < end:
        hi = min(end, k + _LOOK)
        rest = bytes(buf[k:hi]).lstrip(_WS)
        if rest:
            return hi - len(rest)
        k = hi
    return end


__all__ = ["MORE", "members", "resume"]
