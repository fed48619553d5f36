"""Turn the compiled scanner's output into the `Columns` the general path builds.

Every range interned strings into its own tables (`scan.events`); here each distinct value is
decoded once and all ranges' codes are mapped onto one set of `Interner`s in first-appearance
order, metadata, counter and memory events get their args, and the kept args are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from perfview.loaders.trace import fields, idmerge, kept
from perfview.loaders.trace.columns import Columns, Interner
from perfview.loaders.trace.scan import args as scan_args
from perfview.loaders.trace.scan import events as ts
from perfview.loaders.trace.scan.intern import intern_spans

if TYPE_CHECKING:
    from perfview.loaders.trace.read import Text
    from perfview.loaders.trace.scan.intern import Tables

_VALUES = msgspec.json.Decoder(list[Any])
ARG_PC = fields.phase_table(fields.ARG_PHASES)  # one-letter phases whose args are kept
ArgSpans = Callable[[], tuple[np.ndarray, np.ndarray]]  # the kept args' starts and lengths
_INSTANT_PC = fields.phase_table("iI")


def _merge_ids(buf: Text, ranges: list[Tables]) -> tuple[np.ndarray, np.ndarray]:
    """Flow / async ids: only equality matters (no Python values), so the ranges' tables are
    merged by compiled code (a 1 GB trace has 300k distinct ids), from the hashes the
    scanner stored (`idmerge`: 0.43 s -> 0.0x s at 1 GB). Returns each range's codes
    concatenated, and where each range's start."""
    counts = [int(r.counts[ts.T_ID]) for r in ranges]
    starts = np.concatenate([r.starts[ts.T_ID, :k] for r, k in zip(ranges, counts, strict=True)])
    lens = np.concatenate([r.lens[ts.T_ID, :k] for r, k in zip(ranges, counts, strict=True)])
    arr = np.frombuffer(buf, dtype=np.uint8)
    if not idmerge.ready():
        return intern_spans(arr, starts, lens, True), np.cumsum([0, *counts])
    hashes = np.concatenate([r.hashes[ts.T_ID, :k] for r, k in zip(ranges, counts, strict=True)])
    merged = idmerge.merge_hashed(arr, hashes, starts, lens)
    return merged, np.cumsum([0, *counts])


def _decode_values(buf: Text, spans: list[tuple[int, int]]) -> list[Any]:
    """Decode each distinct raw JSON value (string, number or null) once."""
    if not spans:
        return []
    view = memoryview(buf)
    joined = b"[" + b",".join([view[s : s + k] for s, k in spans]) + b"]"
    values: list[Any] = _VALUES.decode(joined)
    return values


def _with_absent(values: list[Any], codes: np.ndarray) -> list[Any]:
    """Values in first-appearance order with None slotted where the first absent (-1) row
    falls, and `codes` shifted in place to match, so ordering equals the general path's
    Interner."""
    absent = np.flatnonzero(codes < 0)
    if not len(absent):
        return values
    first = int(absent[0])
    before = int(codes[:first].max()) + 1 if first else 0
    codes[codes >= before] += 1
    codes[absent] = before
    return [*values[:before], None, *values[before:]]


def _intern(
    interner: Interner, column: np.ndarray, bounds: np.ndarray, values: list[list[Any]]
) -> np.ndarray:
    """`column` (every range's local codes, in file order) turned into global codes, in
    place: a 1 GB trace's code columns are 20 MB each, and copies of them were most of what
    assembling added to the load's peak memory."""
    for k, local_values in enumerate(values):
        codes = column[bounds[k] : bounds[k + 1]]
        local_values = _with_absent(local_values, codes)
        lut = interner.codes(local_values) if local_values else np.zeros(0, dtype=np.int32)
        _map(lut, codes)
    return column


def _map(lut: np.ndarray, codes: np.ndarray) -> None:
    """codes[:] = lut[codes] (codes >= 0), skipping the gather when `lut` is the identity,
    as it is for the first range: its local codes are in first-appearance order, like the
    global ones."""
    if not len(lut):
        codes[:] = -1
    elif not _identity(lut):
        codes[:] = lut[codes]


def _identity(lut: np.ndarray) -> bool:
    n = len(lut)
    return n == 0 or (lut[0] == 0 and lut[-1] == n - 1 and np.array_equal(lut, np.arange(n)))


def assemble(
    buf: Text,
    tables: Sequence[Tables],
    bounds: np.ndarray,
    columns: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]],
    arg_spans: ArgSpans | None = None,
) -> Columns | None:
    """One `Columns` from the scanned ranges (None when a value does not decode).

    `tables` are the ranges' string tables, `bounds` the first row of each range (plus the
    total), `columns` the scanner's int32 / int64 / uint8 columns over all ranges.
    `arg_spans`: gives the kept args' starts and lengths where another found them already
    (`scan.args.ArgsCompaction.spans_found`): those arrays are then the columns' too, not
    a second copy of each beside them (16 bytes an event with args at the scan's end).
    """
    ranges = list(tables)
    # compiled passes without the GIL run beside the Python work: the ids merge, then the
    # memory args (leaving the block waits for both, also when a value does not decode)
    with ThreadPoolExecutor(2, thread_name_prefix="perfview-assemble") as pool:
        return _assemble(buf, ranges, bounds, columns, pool, arg_spans)


def _arg_spans(
    i64: list[np.ndarray], keep: np.ndarray, given: ArgSpans | None
) -> tuple[np.ndarray, np.ndarray]:
    """The kept args' starts and lengths in the file (rows `keep`): `given`'s where it has
    them for those rows (the early gather's, `assemble`), else gathered here."""
    if given is not None:
        starts, lens = given()
        if len(starts) == len(keep) and len(lens) == len(keep):
            return starts, lens
    return i64[ts.I_ARGS][keep], i64[ts.I_ARGLEN][keep]


def _assemble(
    buf: Text,
    ranges: list[Tables],
    bounds: np.ndarray,
    columns: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]],
    pool: ThreadPoolExecutor,
    arg_spans: ArgSpans | None,
) -> Columns | None:
    cols = Columns()
    n = int(bounds[-1])
    codes, i64, u8 = columns

    ids = pool.submit(_merge_ids, buf, ranges)
    try:
        decoded = [
            {t: _decode_values(buf, r.spans(t)) for t in (ts.T_PH, ts.T_NAME, ts.T_CAT)}
            for r in ranges
        ]
        keys = [_decode_values(buf, r.spans(ts.T_KEY)) for r in ranges]
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    for col, t, interner, target in (
        (ts.C_PH, ts.T_PH, cols.phs, cols.ph),
        (ts.C_NAME, ts.T_NAME, cols.names, cols.name),
        (ts.C_CAT, ts.T_CAT, cols.cats, cols.cat),
    ):
        target.append(_intern(interner, codes[col], bounds, [d[t] for d in decoded]))
    pc = u8[ts.U_PC]
    memory_rows = _memory_rows(cols, pc)
    memory = pool.submit(_memory_values, buf, i64, memory_rows)
    _intern_keys(cols.keys, codes[ts.C_PID], codes[ts.C_TID], bounds, keys)
    cols.pid.append(codes[ts.C_PID])
    cols.tid.append(codes[ts.C_TID])
    cols.shape.append(_shapes(cols, buf, ranges, codes[ts.C_DIMS], bounds))
    merged, offsets = ids.result()
    cols.fid.append(_fids(merged, offsets, codes[ts.C_ID], bounds))
    _numbers(cols, i64, u8)
    keep = np.flatnonzero(ARG_PC[pc])
    cols.arg_rows.append(keep)
    starts, lens = _arg_spans(i64, keep, arg_spans)
    cols.arg_lens.append(lens)
    cols.arg_starts.append(starts)
    del starts, lens
    cols.n = n
    _events_with_args(cols, buf, i64, pc, ord("M"), kept.metadata)
    _events_with_args(cols, buf, i64, pc, ord("C"), kept.counters)
    values = memory.result()
    if values is not None:
        _memory_columns(cols, memory_rows, *values)
    elif len(memory_rows):  # an arg the compiled reader does not take: decode those events
        kept.memory(
            cols, _decode_events(buf, i64, memory_rows), np.arange(len(memory_rows)), memory_rows
        )
    return cols


def _intern_keys(
    interner: Interner, pid: np.ndarray, tid: np.ndarray, bounds: np.ndarray,
    values: list[list[Any]],
) -> None:  # fmt: skip
    """pid and tid local codes (one table per range, pid and tid values mixed) turned into
    global codes in place, interned in the order the general path meets them: pid, tid,
    pid, tid, … (so None goes where the first absent one of either is)."""
    for k, local_values in enumerate(values):
        p, q = pid[bounds[k] : bounds[k + 1]], tid[bounds[k] : bounds[k + 1]]
        bad = (p < 0) | (q < 0)
        if bad.any():
            r = int(np.argmax(bad))
            seen = [p[: r + 1] if p[r] >= 0 else p[:r], q[:r]]  # codes before the first absent
            before = max((int(a.max()) + 1 for a in seen if len(a)), default=0)
            for codes in (p, q):
                absent = codes < 0
                codes[codes >= before] += 1
                codes[absent] = before
            local_values = [*local_values[:before], None, *local_values[before:]]
        lut = interner.codes(local_values) if local_values else np.zeros(0, dtype=np.int32)
        _map(lut, p)
        _map(lut, q)


def _shapes(
    cols: Columns, buf: Text, ranges: list[Tables], column: np.ndarray, bounds: np.ndarray
) -> np.ndarray:
    """Global shape codes: each range's distinct Input Dims compacted and interned once."""
    view = memoryview(buf)
    for k, r in enumerate(ranges):
        c = column[bounds[k] : bounds[k + 1]]
        lut = np.array(
            [
                cols.shapes.add(kept.compact_dims(bytes(view[s : s + k])))
                for s, k in r.spans(ts.T_DIMS)
            ]
            + [0],
            dtype=np.int32,
        )
        c[:] = lut[c]  # in place (see `_intern`); -1 (no dims) picks the trailing 0: ""
    return column


def _fids(
    merged: np.ndarray, offsets: np.ndarray, column: np.ndarray, bounds: np.ndarray
) -> np.ndarray:
    """Global flow-id codes from each range's local ones (`_merge_ids`)."""
    for k in range(len(bounds) - 1):
        c = column[bounds[k] : bounds[k + 1]]
        lut = merged[offsets[k] : offsets[k + 1]].astype(np.int32)
        # -1 (no id) stays -1: the identity keeps it, a gather reads the appended -1
        if not _identity(lut):
            c[:] = np.append(lut, -1).astype(np.int32)[c]  # in place (see `_intern`)
    return column


def _numbers(cols: Columns, i64: list[np.ndarray], u8: list[np.ndarray]) -> None:
    """The columns the scanner wrote as they are (its flags are 0 / 1: viewed as bool)."""
    cols.ts.append(i64[ts.I_TS])
    cols.ts_ok.append(u8[ts.U_TSOK].view(np.bool_))
    cols.dur.append(i64[ts.I_DUR])
    cols.dur_ok.append(u8[ts.U_DUROK].view(np.bool_))
    cols.corr.append(i64[ts.I_CORR])
    cols.ext.append(i64[ts.I_EXT])
    cols.bp_e.append(u8[ts.U_BPE].view(np.bool_))
    cols.scope.append(u8[ts.U_SCOPE])


def _memory_rows(cols: Columns, pc: np.ndarray) -> np.ndarray:
    """Rows of torch's [memory] / [OutOfMemory] instants."""
    mem_codes = [i for i, v in enumerate(cols.names.values) if v in fields.MEMORY_NAMES]
    if not mem_codes:
        return np.zeros(0, dtype=np.int64)
    is_memory_name = np.zeros(len(cols.names.values), dtype=np.bool_)
    is_memory_name[mem_codes] = True
    return np.flatnonzero(_INSTANT_PC[pc] & is_memory_name[cols.name[0]])


MEMORY_COLUMNS = tuple(f.attr for f in fields.MEMORY_ARGS)
MEMORY_DEFAULTS = np.array([fields.MEMORY_DEFAULTS.get(a, 0) for a in MEMORY_COLUMNS], np.int64)


def _memory_values(
    buf: Text, i64: list[np.ndarray], rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The memory events' integer args (values, present), read by compiled code; None when
    one of them needs the general decoder."""
    values = np.zeros((len(rows), len(MEMORY_COLUMNS)), dtype=np.int64)
    ok = np.zeros(values.shape, dtype=np.bool_)
    if not len(rows):
        return values, ok
    starts = np.ascontiguousarray(i64[ts.I_ARGS][rows])
    lens = np.ascontiguousarray(i64[ts.I_ARGLEN][rows])
    if not scan_args.int_args(np.frombuffer(buf, dtype=np.uint8), starts, lens, values, ok):
        return None
    return values, ok


def _memory_columns(cols: Columns, rows: np.ndarray, values: np.ndarray, ok: np.ndarray) -> None:
    """The memory table's columns from `_memory_values`."""
    if not len(rows):
        return
    oom = cols.names.index.get(fields.MEMORY_NAMES[1], -2)
    out = cols.memory
    out["row"] = [rows.astype(np.int64)]
    out["oom"] = [cols.name[0][rows] == oom]
    for w, name in enumerate(MEMORY_COLUMNS):
        out[name] = [np.where(ok[:, w], values[:, w], MEMORY_DEFAULTS[w])]


def _decode_events(buf: Text, i64: list[np.ndarray], rows: np.ndarray) -> list[Any]:
    """The few events whose args Python needs (metadata, counters, memory), as `Ev`s."""
    view = memoryview(buf)
    starts = i64[ts.I_START][rows].tolist()
    ends = i64[ts.I_END][rows].tolist()
    joined = b"[" + b",".join([view[a:b] for a, b in zip(starts, ends, strict=True)]) + b"]"
    return kept.EVENTS.decode(joined)  # type: ignore[no-any-return]


def _events_with_args(
    cols: Columns, buf: Text, i64: list[np.ndarray], pc: np.ndarray, phase: int, fn: Any
) -> None:
    rows = np.flatnonzero(pc == phase)
    if len(rows):
        fn(cols, _decode_events(buf, i64, rows), np.arange(len(rows)), rows)


__all__ = ["assemble"]
