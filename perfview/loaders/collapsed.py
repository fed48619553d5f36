"""Collapsed ("folded") stacks: one `root;caller;leaf COUNT` line per stack.

Written by py-spy (`--format raw`), Austin (text output, one line per sample with `#` metadata
lines and `P<pid>;T<tid>` roots), Brendan Gregg's stackcollapse scripts, perf and
torch.profiler's `export_stacks()`. Identical stacks are summed; blank and `#` lines are
skipped; frames may hold spaces (only the last space separates the count). Austin's `P`/`T`
frames stay as roots, so its threads show as the tree's first levels.

Frames in py-spy's `func (file:line)` and Austin's `file:func:line` styles are split into
name, file and line; any other frame is a name. Austin's `# mode:` header gives the unit
(wall/cpu: microseconds; memory: bytes); otherwise the counts are samples.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from perfview.core.analysis.sampled import build_tree, frames_table, stack_items
from perfview.core.model import Bundle, SampledProfile
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import PLAIN, read_content, strip_bom

NAME: Final = "collapsed"
DESCRIPTION = "collapsed stacks"
EXTENSIONS = (".folded", ".collapsed", ".austin", ".stacks")
FORMAT: Final = "sampled"
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_LINE = re.compile(rb"^(?:[^\x00]*\S[ \t]+)?[0-9]+(?:\.[0-9]+)?(?:,[-0-9.,]*)?$")
_PYSPY = re.compile(r"^(?P<name>.*\S) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
_AUSTIN = re.compile(r"^(?P<file>.*[/\\].*|.*\.pyx?|<[^>]*>):(?P<name>[^:]+):(?P<line>\d+)$")
_THREAD = re.compile(r"^(T\d[\d:.]*|thread \(0x[0-9A-Fa-f]+\).*)$")
_MODE = re.compile(rb"^#\s*mode:\s*(\w+)", re.MULTILINE)
_MAX_WEIGHT = 1e300


def _content_lines(head: bytes) -> list[bytes]:
    lines = strip_bom(head).splitlines()
    if len(head) >= 4096 and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut by the head
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith(b"#")]


def sniff(head: bytes, path: Path) -> bool:
    """Text whose every non-comment line (of the head) is `frames COUNT`, with `;` somewhere
    or the collapsed extension (a flat one-frame-per-line file has no `;`)."""
    if b"\x00" in head[:4096]:
        return False
    lines = _content_lines(head)[:200]
    if not lines or not all(_LINE.match(ln) for ln in lines):
        return False
    if not any(b" " in ln or b"\t" in ln for ln in lines):
        return False  # numbers alone are not stacks
    if lines[0].startswith((b"MEM ", b"CHLD ", b"FUNC ", b"CMDLINE ")):
        return False
    flat_ok = path.name.lower().endswith(EXTENSIONS) or len(lines) >= 3
    return any(b";" in ln for ln in lines) or flat_ok


def refuse(head: bytes, path: Path) -> str | None:
    """A `.folded`-named text file whose lines are not `stack count`."""
    if path.name.lower().endswith(EXTENSIONS) and not sniff(head, path):
        return "it is not collapsed stacks: its lines do not end with a sample count"
    return None


def _parse(text: str) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    """Distinct stacks with their summed weights and line counts, and the number of lines."""
    index: dict[str, int] = {}
    weights: list[float] = []
    counts: list[int] = []
    n = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        stack, _sep, count = line.rpartition(" ")
        stack = stack.rstrip()  # "" for a count alone: samples with no frame (pylaprof)
        try:
            weight = float(count.split(",", 1)[0])
        except ValueError:
            weight = -1.0
        if not 0 <= weight < _MAX_WEIGHT:
            raise LoadError(f"it is not collapsed stacks: line {number} does not end with a count")
        i = index.setdefault(stack, len(weights))
        if i == len(weights):
            weights.append(weight)
            counts.append(1)
        else:
            weights[i] += weight
            counts[i] += 1
        n += 1
    return list(index), np.asarray(weights, np.float64), np.asarray(counts, np.float64), n


def _parse_fast(raw: bytes) -> tuple[list[str], np.ndarray, np.ndarray, int] | None:
    """`_parse` for the common shape (`stack COUNT` with an integer count), vectorised.

    Line boundaries, the last space of each line and the counts are found with numpy over
    the bytes, identical stacks are grouped by a hash table (pandas' factorize), so a
    million lines cost about a second instead of ten. Anything unusual (a fractional or
    comma-separated count, padding spaces, a bad line) returns None and `_parse` decides.
    """
    arr = np.frombuffer(raw, dtype=np.uint8)
    if not len(arr):
        return [], np.zeros(0), np.zeros(0), 0
    nl = np.flatnonzero(arr == 10)
    starts = np.concatenate(([0], nl + 1)).astype(np.int64)
    ends = np.concatenate((nl, [len(arr)])).astype(np.int64)
    ends -= (ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13)  # CRLF
    first = arr[np.minimum(starts, len(arr) - 1)]
    keep = (ends > starts) & (first != ord("#"))
    starts, ends = starts[keep], ends[keep]
    # the count is the last field and short: look for its space in the last 16 bytes only
    last = np.full(len(starts), -1, dtype=np.int64)
    for k in range(1, 17):
        pos = ends - k
        hit = (last < 0) & (pos >= starts) & (arr[np.maximum(pos, 0)] == 32)
        last[hit] = pos[hit]
    has_sep = last >= starts
    num_start = np.where(has_sep, last + 1, starts)
    stack_end = np.where(has_sep, last, starts)
    lens = ends - num_start
    if not len(lens):
        return [], np.zeros(0), np.zeros(0), 0
    if lens.min() < 1 or lens.max() > 15:
        return None
    padded = has_sep & (stack_end > starts) & np.isin(arr[np.maximum(stack_end - 1, 0)], (9, 32))
    if padded.any() or np.isin(first[keep], (9, 32))[stack_end > starts].any():
        return None
    value = np.zeros(len(starts), dtype=np.int64)
    for k in range(int(lens.max())):
        active = k < lens
        digit = arr[np.where(active, num_start + k, 0)].astype(np.int64) - 48
        if ((digit < 0) | (digit > 9))[active].any():
            return None
        value = np.where(active, value * 10 + digit, value)
    index: dict[bytes, int] = {}
    codes = np.fromiter(
        (
            index.setdefault(raw[a:b], len(index))
            for a, b in zip(starts.tolist(), stack_end.tolist(), strict=True)
        ),
        dtype=np.int64,
        count=len(starts),
    )
    weights = np.bincount(codes, weights=value.astype(np.float64), minlength=len(index))
    counts = np.bincount(codes, minlength=len(index)).astype(np.float64)
    stacks = [u.decode("utf-8", errors="replace") for u in index]
    return stacks, weights, counts, len(starts)


def _split_frame(frame: str) -> tuple[str, str, int]:
    m = _PYSPY.match(frame) or _AUSTIN.match(frame)
    if m is None:
        return frame, "", -1
    line = m.group("line")
    number = int(line) if line and len(line) < 18 else -1
    return m.group("name"), m.group("file") or "", number


def _threads(stacks: list[str], weights: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """One row per thread root (Austin `P…;T…`, py-spy `thread (0x…)`), else one row."""
    acc: dict[str, list[float]] = {}
    for stack, w, c in zip(stacks, weights, counts, strict=True):
        parts = stack.split(";", 2)
        thread = next(
            (";".join(parts[: i + 1]) for i, p in enumerate(parts[:2]) if _THREAD.match(p)), ""
        )
        row = acc.setdefault(thread, [0.0, 0.0])
        row[0] += c
        row[1] += w
    if len(acc) > 1 and "" in acc:
        acc["(no thread)"] = acc.pop("")
    names = list(acc) if acc else [""]
    return pd.DataFrame(
        {
            "thread": np.arange(len(names)),
            "name": pd.Series([n or "(all)" for n in names], dtype=object),
            "samples": np.asarray([acc.get(n, [0, 0])[0] for n in names], dtype=np.int64),
            "weight": np.asarray([acc.get(n, [0, 0])[1] for n in names], dtype=np.float64),
        }
    )


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Sum identical stacks, then merge them into one tree (counts as weights)."""
    path = Path(path)
    progress(0.0, "reading collapsed stacks")
    raw = read_content(path)
    fast = _parse_fast(raw)
    stacks, weights, counts, n_lines = (
        fast if fast is not None else _parse(raw.decode("utf-8", errors="replace"))
    )
    total = float(weights.sum())
    if not stacks:
        raise EmptyProfile("the collapsed stacks file holds no stacks")
    mode = _MODE.search(raw[:8192])
    unit, scale = "samples", 1.0
    if mode is not None and mode.group(1) in (b"wall", b"cpu"):
        unit, scale = "ns", 1e3  # Austin samples in microseconds
    elif mode is not None and mode.group(1) == b"memory":
        unit = "bytes"
    progress(0.4, "merging stacks")
    flat_names = ";".join(s for s in stacks if s).split(";")
    codes, uniques = pd.factorize(pd.Series(flat_names, dtype=object), sort=False)
    lengths = np.fromiter((s.count(";") + 1 if s else 0 for s in stacks), np.int64, len(stacks))
    parsed = [_split_frame(str(f)) for f in uniques]
    frames = frames_table([p[0] for p in parsed], [p[1] for p in parsed], [p[2] for p in parsed])
    items = stack_items(codes.astype(np.int64), lengths, weights * scale, counts)
    empty = lengths == 0
    tree = build_tree(
        [items],
        frames,
        root_extra=(float(weights[empty].sum() * scale), float(counts[empty].sum())),
    )
    threads = _threads(stacks, weights * scale, counts)
    progress(1.0, "done")
    return Bundle(
        format=FORMAT,
        path=path,
        tree=tree,
        sampled=SampledProfile(unit=unit, threads=threads, source=NAME),
        counts={
            "samples": n_lines,
            "threads": len(threads),
            "frames": len(uniques),
            "stacks": len(stacks),
            "weight": int(total) if float(total).is_integer() else round(total),
        },
        duration_ns=0,
    )
