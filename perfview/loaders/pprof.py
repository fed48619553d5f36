"""pprof profiles (`profile.proto`, gzipped or plain): Go, pyroscope, Austin's `austin2pprof`.

A profile is samples, each a list of location ids (leaf first) with one value per sample type
(`samples/count` and `cpu/nanoseconds` for a Go CPU profile), and labels. A location holds one
or more lines (inlined calls, innermost first), each naming a function. The stacks become the
sampled model every sampling format shares, so the flame graphs, functions, sandwich, threads
and diff pages apply unchanged.

- The tree is weighted by the default sample type: the one `default_sample_type` names, else
  the last (pprof's own rule), unless every sample's value of it is zero (.NET profiles end
  with `lock_time`): then the first type with weight. Every type's total is in the counts
  (`perfview summary`).
- Samples labelled with a thread (`thread_name`, `thread_id`, Austin's `Thread ID`) hang under
  one root per thread, as the other sampled formats' threads do.
- The file is untrusted: the gzip stream is inflated to at most `_MAX_INFLATE` times its size,
  parsing is protobuf's (every wire type and length checked), every id and string index is
  checked, and the frames the stacks expand to are bounded by the file's size.
"""

from __future__ import annotations

import importlib
import zlib
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from perfview.core.analysis.sampled import UNITS, Items, build_tree, frames_table, stack_items
from perfview.core.model import Bundle, SampledProfile
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import GZIP_MAGIC, PLAIN
from perfview.loaders.pprof_proto import INSTALL, message_class

NAME: Final = "pprof"
DESCRIPTION = "a pprof profile"
EXTENSIONS = (".pprof", ".pb.gz", ".pb", ".pprof.gz")
FORMAT: Final = "sampled"
CAPABILITIES = PLAIN  # parsed here, by protobuf's C parser and numpy: nothing to compile

_NOT = "it is not a pprof profile"
_MAX_INFLATE = 200  # a profile inflates ~5-20x; more is a gzip bomb, not a profile
_FRAMES_PER_BYTE = 64  # expanded stack frames allowed per byte of the decoded profile
# pprof's units beside speedscope's (sampled.UNITS), for the tree's weight
_UNITS: dict[str, tuple[str, float]] = UNITS | {
    "count": ("samples", 1.0),
    "μs": ("ns", 1e3),
    "us": ("ns", 1e3),
    "ms": ("ns", 1e6),
    "s": ("ns", 1e9),
    "ns": ("ns", 1.0),
}
_THREAD_KEYS = ("thread_name", "thread name", "thread", "thread_id", "thread id", "tid")
# Top-level fields of profile.proto by number → wire type (0 varint, 2 length-delimited);
# comment (13) is packed (2) or one varint (0).
_WIRE: dict[int, tuple[int, ...]] = {1: (2,), 2: (2,), 3: (2,), 4: (2,), 5: (2,), 6: (2,),
                                     7: (0,), 8: (0,), 9: (0,), 10: (0,), 11: (2,), 12: (0,),
                                     13: (0, 2), 14: (0,), 15: (0,)}  # fmt: skip


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it; (-1, pos) when it runs off the end."""
    value = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7
    return -1, pos


def sniff(head: bytes, path: Path) -> bool:
    """The head walks as a sequence of profile.proto's top-level fields with their wire
    types, and holds a sample type (field 1) whose body walks as a `ValueType` (two small
    numbers): text and other binary formats break the walk within a few bytes. A wire walk,
    not a parse: the head is a cut of the file, and sniffing must not need the `protobuf`
    extra."""
    pos = fields = 0
    sample_type = False
    while pos < len(head):
        key, pos = _varint(head, pos)
        number, wire = key >> 3, key & 7
        if key < 0 or wire not in _WIRE.get(number, ()):
            return False
        value, body = _varint(head, pos)
        if value < 0:
            break  # the head ends inside this field
        pos = body + (value if wire == 2 else 0)
        if number == 1 and pos <= len(head):
            sample_type = sample_type or _value_type(head[body:pos])
            if not _value_type(head[body:pos]):
                return False
        fields += 1
    return sample_type and fields >= 2


def _value_type(body: bytes) -> bool:
    """`body` walks as a ValueType: varint fields 1 (type) and 2 (unit) only."""
    pos = 0
    while pos < len(body):
        key, pos = _varint(body, pos)
        if key not in (0x08, 0x10):
            return False
        value, pos = _varint(body, pos)
        if value < 0:
            return False
    return True


def refuse(head: bytes, path: Path) -> str | None:
    return None


def _decoded(path: Path) -> bytes:
    raw = Path(path).read_bytes()
    if not raw.startswith(GZIP_MAGIC):
        return raw
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    limit = max(len(raw) * _MAX_INFLATE, 1 << 20)
    try:
        out = inflate.decompress(raw, limit)
    except zlib.error as exc:
        raise LoadError("it is a damaged gzip file") from exc
    if inflate.unconsumed_tail:
        raise LoadError(f"{_NOT}: it inflates to more than {_MAX_INFLATE} times its size")
    if not inflate.eof:
        raise LoadError("it is a damaged gzip file (it ends too early)")
    return out


def _parse(data: bytes) -> Any:
    try:
        cls = message_class()
    except ImportError as exc:
        raise LoadError(f"reading pprof profiles needs the protobuf package ({INSTALL})") from exc
    decode_error = importlib.import_module("google.protobuf.message").DecodeError
    try:
        return cls.FromString(data)
    except (decode_error, RecursionError, ValueError) as exc:
        raise LoadError(f"{_NOT}: its protobuf does not parse ({exc})") from exc


class _Strings:
    def __init__(self, table: Any) -> None:
        self.table = list(table)

    def __call__(self, index: int, what: str) -> str:
        if not 0 <= index < len(self.table):
            raise LoadError(f"{_NOT}: a {what} refers past the end of its string table")
        return str(self.table[index])


def _value_index(profile: Any, text: _Strings) -> int:
    """pprof's default sample type: the one `default_sample_type` names, else the last."""
    if profile.default_sample_type:
        name = text(profile.default_sample_type, "default sample type")
        for i, kind in enumerate(profile.sample_type):
            if text(kind.type, "sample type") == name:
                return i
    return len(profile.sample_type) - 1


def _location_frames(profile: Any, text: _Strings) -> tuple[dict[int, list[int]], pd.DataFrame]:
    """Each location id → its frame keys root-first (inlined callers before callees), and
    the frames table the keys index."""
    functions: dict[int, tuple[str, str, int]] = {}
    for fn in profile.function:
        name = text(fn.name, "function's name") or text(fn.system_name, "function's name")
        functions[fn.id] = (name, text(fn.filename, "function's file"), fn.start_line)
    mappings = {m.id: text(m.filename, "mapping's file") for m in profile.mapping}
    index: dict[tuple[str, str, int], int] = {}
    by_location: dict[int, list[int]] = {}
    for loc in profile.location:
        keys: list[tuple[str, str, int]] = []
        for line in reversed(loc.line):  # the last line is the caller the others inline into
            if line.function_id not in functions:
                raise LoadError(f"{_NOT}: a location refers to a function it does not hold")
            name, file, _start = functions[line.function_id]
            number = line.line if 0 < line.line < 2**31 else -1
            keys.append((name or f"0x{loc.address:x}", file, number))
        if not keys:  # an address only (unsymbolised native code)
            keys.append((f"0x{loc.address:x}", mappings.get(loc.mapping_id, ""), -1))
        by_location[loc.id] = [index.setdefault(k, len(index)) for k in keys]
    rows = list(index)
    return by_location, frames_table(
        [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
    )


def _thread(sample: Any, text: _Strings, thread_keys: set[int]) -> str:
    """The sample's thread label ("" for none): a name before an id."""
    found: dict[int, str] = {}
    for label in sample.label:
        if label.key in thread_keys:
            value = text(label.str, "label") if label.str else str(label.num)
            found[label.key] = value
    for key in sorted(found, key=lambda k: _THREAD_KEYS.index(text(k, "label").lower())):
        return found[key]
    return ""


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """The default sample type's stacks merged into one tree; every type's total counted."""
    path = Path(path)
    progress(0.0, "reading the pprof profile")
    data = _decoded(path)
    profile = _parse(data)
    text = _Strings(profile.string_table)
    if not profile.sample_type:
        raise LoadError(f"{_NOT}: it declares no sample type")
    kinds = [
        (text(k.type, "sample type"), text(k.unit, "sample unit")) for k in profile.sample_type
    ]
    n_types = len(kinds)
    chosen = _value_index(profile, text)
    progress(0.3, "reading locations")
    by_location, frames = _location_frames(profile, text)
    thread_keys = {
        i for i, s in enumerate(text.table) if isinstance(s, str) and s.lower() in _THREAD_KEYS
    }
    groups: dict[tuple[str, tuple[int, ...]], int] = {}
    totals = np.zeros(n_types, dtype=np.float64)
    values = np.zeros((len(profile.sample), n_types), dtype=np.float64)
    codes = np.empty(len(profile.sample), dtype=np.int64)
    n_labels = 0
    progress(0.5, "grouping samples")
    for i, sample in enumerate(profile.sample):
        if len(sample.value) != n_types:
            raise LoadError(f"{_NOT}: a sample has {len(sample.value)} values for {n_types} types")
        values[i] = sample.value
        n_labels += len(sample.label)
        key = (_thread(sample, text, thread_keys), tuple(sample.location_id))
        codes[i] = groups.setdefault(key, len(groups))
    totals = values.sum(axis=0)
    if not totals[chosen] and totals.any():  # an all-zero default (.NET's lock_time) draws
        chosen = int(np.flatnonzero(totals)[0])  # nothing: the first type that has weight
    weights = np.bincount(codes, weights=values[:, chosen], minlength=len(groups))
    counts = np.bincount(codes, minlength=len(groups)).astype(np.float64)
    unit, scale = _UNITS.get(kinds[chosen][1], ("samples", 1.0))
    progress(0.7, "merging stacks")
    tree, threads = _tree(list(groups), weights * scale, counts, by_location, frames, len(data))
    if not len(profile.sample):
        raise EmptyProfile("the pprof profile holds no samples")
    progress(1.0, "done")
    per_type = {f"{name}/{u}": _int(total) for (name, u), total in zip(kinds, totals, strict=True)}
    return Bundle(
        format=FORMAT,
        path=path,
        tree=tree,
        sampled=SampledProfile(unit=unit, threads=threads, source=NAME),
        counts={
            "samples": len(profile.sample),
            "threads": len(threads),
            "frames": len(frames),
            "stacks": len(groups),
            "labels": n_labels,
            "period": int(profile.period),
            **per_type,
        },
        duration_ns=max(int(profile.duration_nanos), 0),
    )


def _int(value: float) -> int:
    return int(value) if float(value).is_integer() else round(value)


def _expand(
    groups: list[tuple[str, tuple[int, ...]]],
    by_location: dict[int, list[int]],
    size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Every group's stack as frame keys, root first, concatenated; and each stack's length.
    Vectorised over the stacks' location ids (a heap profile holds a million); the expanded
    frames are counted before they are made, and bounded by the file's size."""
    ids = np.fromiter(by_location, dtype=np.uint64, count=len(by_location))
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    key_lists = list(by_location.values())
    loc_len = np.asarray([len(key_lists[i]) for i in order], dtype=np.int64)
    loc_start = np.cumsum(loc_len) - loc_len
    loc_keys = np.asarray([k for i in order for k in key_lists[i]], dtype=np.int64)
    depth = np.fromiter((len(stack) for _t, stack in groups), dtype=np.int64, count=len(groups))
    flat_ids = np.fromiter(
        (loc for _t, stack in groups for loc in reversed(stack)),  # the root is the last id
        dtype=np.uint64,
        count=int(depth.sum()),
    )
    where = np.searchsorted(ids, flat_ids)
    where = np.minimum(where, max(len(ids) - 1, 0))
    if len(flat_ids) and (not len(ids) or (ids[where] != flat_ids).any()):
        raise LoadError(f"{_NOT}: a sample refers to a location it does not hold")
    reps = loc_len[where] if len(flat_ids) else np.zeros(0, dtype=np.int64)
    total = int(reps.sum())
    if total > _FRAMES_PER_BYTE * size + 1_000_000:
        raise LoadError(f"{_NOT}: its stacks expand to more frames than its size allows")
    first = np.cumsum(reps) - reps
    offsets = np.repeat(loc_start[where] - first, reps) + np.arange(total, dtype=np.int64)
    bounds = np.cumsum(depth) - depth
    lengths = np.zeros(len(groups), dtype=np.int64)
    has = depth > 0
    if has.any():
        lengths[has] = np.add.reduceat(reps, bounds[has])
    return loc_keys[offsets], lengths


def _tree(
    groups: list[tuple[str, tuple[int, ...]]],
    weights: np.ndarray,
    counts: np.ndarray,
    by_location: dict[int, list[int]],
    frames: pd.DataFrame,
    size: int,
) -> tuple[Any, pd.DataFrame]:
    """The grouped stacks as one tree, under a root per thread when samples name threads;
    and the threads table."""
    flat, lengths = _expand(groups, by_location, size)
    starts = np.cumsum(lengths) - lengths
    threads = sorted({thread for thread, _ in groups})
    position = {t: i for i, t in enumerate(threads)}
    owner = np.fromiter((position[t] for t, _s in groups), dtype=np.int64, count=len(groups))
    parts = [np.flatnonzero(owner == i) for i in range(len(threads))]
    items: list[Items] = []
    loose: list[tuple[float, float]] = []
    for m in parts:
        # the members' frames, in member order: one gather over their concatenated ranges
        span = np.repeat(starts[m] - (np.cumsum(lengths[m]) - lengths[m]), lengths[m])
        stack_keys = flat[span + np.arange(int(lengths[m].sum()), dtype=np.int64)]
        items.append(stack_items(stack_keys, lengths[m], weights[m], counts[m]))
        empty = lengths[m] == 0
        loose.append((float(weights[m][empty].sum()), float(counts[m][empty].sum())))
    names = [t or ("(no thread)" if len(threads) > 1 else "(all)") for t in threads]
    table = pd.DataFrame(
        {
            "thread": np.arange(len(threads)),
            "name": pd.Series(names, dtype=object),
            "samples": np.asarray([counts[p].sum() for p in parts], dtype=np.int64),
            "weight": np.asarray([weights[p].sum() for p in parts], dtype=np.float64),
        }
    )
    if threads == [""]:
        return build_tree(items, frames, root_extra=loose[0]), table
    frames = pd.concat([frames, frames_table(names, [""] * len(names), [-1] * len(names))])
    thread_keys = list(range(len(frames) - len(names), len(frames)))
    return build_tree(items, frames.reset_index(drop=True), thread_keys, loose), table
