"""Compiled scanner for the events array of a Chrome trace: bytes in, columns out.

msgspec decodes JSON fast, but turning its Python objects into columns costs several times the
decode, and it holds the GIL, so one core does everything. This scanner (numba, compiled once
and cached on disk) walks the bytes of the `traceEvents` array once, validating the JSON as it
goes, and writes each event straight into preallocated columns: exact int64 ns times, kineto's
id args as integers, and strings interned into per-scan hash tables (codes in order of first
appearance; a table stores each distinct value as a byte span of the buffer, which Python
decodes once per distinct value). It releases the GIL, so several threads scan byte ranges of
one file at the same time (`scan.parallel`).

The scanner handles the common, well-formed shape only. Anything else (a quoted or exponent
number, a non-object event, duplicate keys, invalid JSON, a truncated file, …) makes it stop with
ODD or TRUNC, and the caller parses the whole file again on the general msgspec path, so results
never depend on which path ran (tests compare both on every sample).

Numbers follow `numbers.parse_decimal` exactly: value × 10**scale, the next digit rounding
half up, never through float64.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from perfview.loaders.trace import fields
from perfview.loaders.trace.scan.byte_ops import leaf, prefetch
from perfview.loaders.trace.scan.digits import number, skip_number
from perfview.loaders.trace.scan.intern import (
    N_TABLES,
    _intern,
    _intern_hashed,
    _same,
    hash_span,
    prefetch_slot,
)
from perfview.loaders.trace.scan.keys import key_table, match_key
from perfview.loaders.trace.scan.tokens import MAX_DEPTH, literal, skip_value, skip_ws, string

# scan statuses
END, FULL, GROW, STOPPED, ODD, TRUNC = 0, 1, 2, 3, 4, 5
# the scanner asks for the bytes this far ahead of each event: the hardware prefetcher stops at
# 4 KB pages, and the first read of each page of the file was a cache miss of several percent
AHEAD = 1024
# hash tables (rows of the table arrays)
T_PH, T_NAME, T_CAT, T_KEY, T_DIMS, T_ID = 0, 1, 2, 3, 4, 5
# int32 code columns
C_PH, C_NAME, C_CAT, C_PID, C_TID, C_DIMS, C_ID = 0, 1, 2, 3, 4, 5, 6
N_CODES = 7
# int64 columns
I_TS, I_DUR, I_CORR, I_EXT, I_START, I_END, I_ARGS, I_ARGLEN = 0, 1, 2, 3, 4, 5, 6, 7
N_I64 = 8
# uint8 columns
U_TSOK, U_DUROK, U_BPE, U_SCOPE, U_PC = 0, 1, 2, 3, 4
N_U8 = 5


# event keys and kineto arg keys: the table in `fields`, ids = positions in it
EV_KEYS = key_table([f.key for f in fields.EVENT])
K_PH, K_NAME, K_CAT, K_PID, K_TID, K_TS, K_DUR, K_ARGS, K_ID, K_ID2, K_BP, K_S = (
    fields.index(fields.EVENT, a)
    for a in ("ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "id", "id2", "bp", "s")
)
_KIND_CODES = {fields.TEXT: 0, fields.KEY: 1, fields.TIME: 2, fields.ID: 3, fields.RAW: 3}
KIND_TEXT, KIND_KEY, KIND_TIME, KIND_RAW = 0, 1, 2, 3
EV_KINDS = np.array([_KIND_CODES[f.kind] for f in fields.EVENT], dtype=np.int8)
N_KEYS = len(fields.EVENT)
ARG_KEYS = key_table([f.key for f in fields.KINETO_ARGS])
A_CORR, A_EXT, A_EXTL, A_DIMS, A_DIMSL = (
    fields.index(fields.KINETO_ARGS, a)
    for a in ("correlation", "ext", "ext_lower", "dims", "dims_lower")
)
# `_args` keeps the ids in scratch slots 0..2 and the shapes after them
assert (A_CORR, A_EXT, A_EXTL, A_DIMS, A_DIMSL) == (0, 1, 2, 3, 4), "KINETO_ARGS order"
# one-letter phases whose event keeps or needs an id / a scope (as the general path)
_ID_PC = fields.phase_table(fields.ID_PHASES)
WHOLE_PHASES = "MCiI"  # events `assemble` may decode whole: only theirs have I_START / I_END
_WHOLE_PC = fields.phase_table(WHOLE_PHASES)
_SCOPE_PC = fields.phase_table(fields.SCOPE_PHASES)


@leaf
def _args(
    buf: np.ndarray, i: int, n: int, stack: np.ndarray, ids: np.ndarray, dims: np.ndarray
) -> tuple[int, int, int, int, int, int]:
    """Scan the args object at buf[i] == '{'.

    Returns (end, correlation, External id, external id, dims start, dims length): ids are -1
    when absent or null, the dims span is "Input Dims" else "Input dims" (length 0 when
    neither). end is -1 for input the general path must judge, -2 when cut off.
    """
    ids[:] = -1  # scratch arrays, reused across events (no allocation per event)
    dims[:] = 0  # [start, length] of "Input Dims", then of "Input dims"
    seen = 0
    i = skip_ws(buf, i + 1, n)
    if i >= n:
        return -2, 0, 0, 0, 0, 0
    if buf[i] == 125:
        return i + 1, -1, -1, -1, 0, 0
    while True:
        if buf[i] != 34:
            return -1, 0, 0, 0, 0, 0
        ks = i + 1
        i, kf = string(buf, i, n)
        if i < 0:
            return i, 0, 0, 0, 0, 0
        key = match_key(buf, ks, i - 1 - ks, n, ARG_KEYS)
        if kf & 1:
            return -1, 0, 0, 0, 0, 0  # an escaped key might spell one of ours
        i = skip_ws(buf, i, n)
        if i >= n:
            return -2, 0, 0, 0, 0, 0
        if buf[i] != 58:
            return -1, 0, 0, 0, 0, 0
        i = skip_ws(buf, i + 1, n)
        if i >= n:
            return -2, 0, 0, 0, 0, 0
        if key >= 0:
            if seen & (1 << key):
                return -1, 0, 0, 0, 0, 0
            seen |= 1 << key
        c = buf[i]
        if key >= 0 and key <= A_EXTL:
            if c == 110:
                i = literal(buf, i, n)
            elif c == 45 or 48 <= c <= 57:
                i, kind, value = number(buf, i, n, 0)
                if kind != 1:
                    return (-2 if i >= n else -1), 0, 0, 0, 0, 0
                ids[key] = value
            else:
                return -1, 0, 0, 0, 0, 0
        else:
            vs = i
            if c == 45 or 48 <= c <= 57:  # most other args are numbers: no skip_value loop
                i, kind = skip_number(buf, i, n)
                if kind == 0:
                    return (-2 if i >= n else -1), 0, 0, 0, 0, 0
            else:
                i = skip_value(buf, i, n, stack)
            if key >= A_DIMS and i >= 0:
                dims[2 * (key - A_DIMS)] = vs
                dims[2 * (key - A_DIMS) + 1] = i - vs
        if i < 0:
            return i, 0, 0, 0, 0, 0
        i = skip_ws(buf, i, n)
        if i >= n:
            return -2, 0, 0, 0, 0, 0
        c = buf[i]
        if c == 44:
            i = skip_ws(buf, i + 1, n)
            if i >= n:
                return -2, 0, 0, 0, 0, 0
            continue
        if c == 125:
            break
        return -1, 0, 0, 0, 0, 0
    d = 0 if dims[1] > 0 else 2
    return i + 1, ids[0], ids[1], ids[2], dims[d], dims[d + 1]


@njit(cache=True, nogil=True, inline="always")
def _unquoted(buf: np.ndarray, a: int, b: int) -> tuple[int, int]:
    """The span buf[a:b] without its surrounding quotes (a flow id is kept as written)."""
    while a < b and buf[a] == 34:
        a += 1
    while b > a and buf[b - 1] == 34:
        b -= 1
    return a, b


@leaf
def _event(
    buf: np.ndarray, i: int, n: int, scratch: np.ndarray, stack: np.ndarray, m: int,
    slots: np.ndarray, hashes: np.ndarray, tstarts: np.ndarray, tlens: np.ndarray,
    counts: np.ndarray, codes: np.ndarray, i64: np.ndarray, u8: np.ndarray,
) -> int:  # fmt: skip
    """Scan the event object at buf[i] == '{' and write it as row m; index after it, or
    -1 (leave it to the general path) / -2 (cut off).

    One long function on purpose: it is the scanner's per-event loop, and the per-key state
    (spans, flags, numbers) lives in registers across the keys of one event."""
    start = i
    sp = scratch[0]  # value span start per K_* key (-1: absent)
    sl = scratch[1]  # value span length
    sf = scratch[2]  # string flags (1 escape, 2 non-ASCII)
    sp[:] = -1
    sl[:] = 0
    sf[:] = 0
    ts = dur = 0
    ts_ok = dur_ok = 0
    corr = ext = extl = -1
    dims_s = dims_l = 0
    id_hash = np.uint64(0)  # the flow id's hash, taken (and its slot prefetched) when read
    i = skip_ws(buf, i + 1, n)
    if i >= n:
        return -2
    if buf[i] != 125:
        while True:
            if buf[i] != 34:
                return -1
            ks = i + 1
            i, kf = string(buf, i, n)
            if i < 0:
                return i
            key = match_key(buf, ks, i - 1 - ks, n, EV_KEYS)
            if kf & 1:
                return -1
            i = skip_ws(buf, i, n)
            if i >= n:
                return -2
            if buf[i] != 58:
                return -1
            i = skip_ws(buf, i + 1, n)
            if i >= n:
                return -2
            c = buf[i]
            vs = i
            if key >= 0 and sp[key] >= 0:
                return -1  # a duplicate key: the general path decides which one counts
            fk = EV_KINDS[key] if key >= 0 else KIND_RAW
            if fk == KIND_TEXT:
                if c == 34:
                    i, f = string(buf, i, n)
                    sf[key] = f
                elif c == 110:
                    i = literal(buf, i, n)
                else:
                    return -1
            elif fk == KIND_KEY:
                if c == 34:
                    i, f = string(buf, i, n)
                elif c == 110:
                    i = literal(buf, i, n)
                elif c == 45 or 48 <= c <= 57:
                    i, kind = skip_number(buf, i, n)
                    if kind != 1:
                        return -2 if i >= n else -1
                else:
                    return -1
            elif fk == KIND_TIME:
                if c == 110:
                    i = literal(buf, i, n)
                elif c == 45 or 48 <= c <= 57:
                    i, kind, value = number(buf, i, n, 3)
                    if kind != 1 and kind != 2:
                        return -2 if i >= n else -1
                    if key == K_TS:
                        ts, ts_ok = value, 1
                    else:
                        dur, dur_ok = value, 1
                else:
                    return -1
            elif key == K_ARGS:
                if c != 123:
                    return -1
                i, corr, ext, extl, dims_s, dims_l = _args(
                    buf, i, n, stack, scratch[3, :3], scratch[3, 3:7]
                )
            else:
                i = skip_value(buf, i, n, stack)
                if key == K_ID and i >= 0:
                    a, b = _unquoted(buf, vs, i)
                    id_hash = hash_span(buf, a, b - a, True)
                    prefetch_slot(T_ID, id_hash, slots)
            if i < 0:
                return i
            if key >= 0:
                sp[key] = vs
                sl[key] = i - vs
            i = skip_ws(buf, i, n)
            if i >= n:
                return -2
            c = buf[i]
            if c == 44:
                i = skip_ws(buf, i + 1, n)
                if i >= n:
                    return -2
                continue
            if c == 125:
                break
            return -1
    end = i + 1
    # escaped one-letter values could decode to a letter the general path acts on
    if (sf[K_PH] | sf[K_BP] | sf[K_S]) & 1:
        return -1
    pc = 0
    if sp[K_PH] >= 0 and sl[K_PH] == 3 and buf[sp[K_PH]] == 34:
        pc = buf[sp[K_PH] + 1]
    for key, col, tab in ((K_PH, C_PH, T_PH), (K_NAME, C_NAME, T_NAME), (K_CAT, C_CAT, T_CAT),
                          (K_PID, C_PID, T_KEY), (K_TID, C_TID, T_KEY)):  # fmt: skip
        if sp[key] < 0:
            codes[col, m] = -1
            continue
        # most events repeat the previous event's phase, category, pid and tid: compare
        # with that value's bytes before hashing
        prev = codes[col, m - 1] if m > 0 else -1
        same = prev >= 0 and tlens[tab, prev] == sl[key]
        if same and _same(buf, tstarts[tab, prev], sp[key], sl[key], False):
            codes[col, m] = prev
        else:
            codes[col, m] = _intern(
                tab, buf, sp[key], sl[key], False, slots, hashes, tstarts, tlens, counts
            )
    if dims_l > 0:
        codes[C_DIMS, m] = _intern(
            T_DIMS, buf, dims_s, dims_l, False, slots, hashes, tstarts, tlens, counts
        )
    else:
        codes[C_DIMS, m] = -1
    if _ID_PC[pc]:
        k = K_ID if sp[K_ID] >= 0 else K_ID2
        a = sp[k] if sp[k] >= 0 else 0
        a, b = _unquoted(buf, a, a + sl[k])
        if k != K_ID:
            id_hash = hash_span(buf, a, b - a, True)
        codes[C_ID, m] = _intern_hashed(
            T_ID, id_hash, buf, a, b - a, True, slots, hashes, tstarts, tlens, counts
        )
    else:
        codes[C_ID, m] = -1
    i64[I_TS, m] = ts
    i64[I_DUR, m] = dur
    i64[I_CORR, m] = corr
    i64[I_EXT, m] = ext if ext != -1 else extl
    if _WHOLE_PC[pc]:  # M, C, i and I: Python may decode these events whole (`assemble`);
        i64[I_START, m] = start  # the other rows' pages are never touched (batches.to_columns)
        i64[I_END, m] = end
    i64[I_ARGS, m] = sp[K_ARGS] if sp[K_ARGS] >= 0 else 0
    i64[I_ARGLEN, m] = sl[K_ARGS]
    u8[U_TSOK, m] = ts_ok
    u8[U_DUROK, m] = dur_ok
    bp = sp[K_BP]
    u8[U_BPE, m] = pc == 102 and bp >= 0 and sl[K_BP] == 3 and buf[bp] == 34 and buf[bp + 1] == 101
    scope = 0
    s = sp[K_S]
    if _SCOPE_PC[pc] and s >= 0 and sl[K_S] > 2 and buf[s] == 34 and not (sf[K_S] & 2):
        scope = buf[s + 1]
    u8[U_SCOPE, m] = scope
    u8[U_PC, m] = pc
    return end


@njit(cache=True, nogil=True)
def scan_events(
    buf: np.ndarray, pos: int, first: bool, stop_at: int,
    slots: np.ndarray, hashes: np.ndarray, tstarts: np.ndarray, tlens: np.ndarray,
    counts: np.ndarray, codes: np.ndarray, i64: np.ndarray, u8: np.ndarray, m: int,
) -> tuple[int, int, int]:  # fmt: skip
    """Scan events from buf[pos] (the array's '[' when `first`, else an event's '{') into rows
    m.. of the output columns. Returns (status, position, rows filled):

    END: the array closed (position after ']'); FULL / GROW: the columns / a hash table need
    room (position at the next event, resume there); STOPPED: the next event starts at or
    after `stop_at` (>= 0); ODD / TRUNC: leave the file to the general path.
    """
    n = len(buf)
    stack = np.empty(MAX_DEPTH, dtype=np.uint8)
    scratch = np.zeros((4, max(N_KEYS, 7)), dtype=np.int64)
    cap = codes.shape[1]
    limit = min(hashes.shape[1], slots.shape[1] // 2) - 8
    i = pos
    if first:
        i = skip_ws(buf, i + 1, n)
        if i >= n:
            return TRUNC, i, m
        if buf[i] == 93:
            return END, i + 1, m
    while True:
        if m >= cap:
            return FULL, i, m
        for t in range(N_TABLES):
            if counts[t] >= limit:
                return GROW, i, m
        if stop_at >= 0 and i >= stop_at:
            return STOPPED, i, m
        if buf[i] != 123:
            return ODD, i, m
        if i + AHEAD < n:  # see AHEAD
            prefetch(buf, i + AHEAD)
        r = _event(
            buf, i, n, scratch, stack, m, slots, hashes, tstarts, tlens, counts, codes, i64, u8
        )
        if r < 0:
            return (TRUNC if r == -2 else ODD), i, m
        m += 1
        j = skip_ws(buf, r, n)
        if j >= n:
            return TRUNC, j, m
        c = buf[j]
        if c == 44:
            j = skip_ws(buf, j + 1, n)
            if j >= n:
                return TRUNC, j, m
            i = j
            continue
        if c == 93:
            return END, j + 1, m
        return ODD, j, m


__all__ = ["scan_events"]
