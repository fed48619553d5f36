"""pyinstrument output: the `-r json` renderer (a `root_frame` tree, 3.x and later) and saved
sessions (`.pyisession`, `Session.save`: a list of `frame_records`, each a full stack and the
time it was seen for).

The JSON renderer already merged the samples into a tree whose nodes carry total `time`; self
time is what the children do not cover. A session's records are weighted stacks, merged like
collapsed stacks. Times are seconds, so the tree's weights are nanoseconds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np
import pandas as pd

from perfview.core.analysis.sampled import build_tree, frames_table, span_items, stack_items
from perfview.core.model import Bundle, SampledProfile
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import PLAIN, read_content, strip_bom

NAME: Final = "pyinstrument"
DESCRIPTION = "a pyinstrument profile"
EXTENSIONS = (".pyisession",)
FORMAT: Final = "sampled"
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_ROOT = re.compile(rb'"root_frame"\s*:')
_SESSION = re.compile(rb'"(frame_records|start_call_stack)"\s*:')
_MAX_SECONDS = 9.2e9


def sniff(head: bytes, path: Path) -> bool:
    """A JSON object with pyinstrument's `root_frame` or a session's `frame_records`."""
    text = strip_bom(head).lstrip()
    return text.startswith(b"{") and bool(_ROOT.search(text) or _SESSION.search(text))


def refuse(head: bytes, path: Path) -> str | None:
    """Nothing this format's neighbours write needs a special refusal."""
    return None


def _read(path: Path) -> dict[str, Any]:
    raw = read_content(path)
    try:
        doc = msgspec.json.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise LoadError(f"it is a pyinstrument file that is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise LoadError("it is a pyinstrument file that is not a JSON object")
    return doc


def _seconds(value: Any, what: str) -> float:
    if type(value) not in (int, float) or not 0 <= value < _MAX_SECONDS:
        raise LoadError(f"it is a pyinstrument file whose {what} is not a time in seconds")
    return float(value)


def _identity(frame: dict[str, Any]) -> tuple[str, str, int]:
    name = frame.get("function")
    if not isinstance(name, str):
        raise LoadError("it is a pyinstrument file with a frame that has no function name")
    file = frame.get("file_path")
    line = frame.get("line_no")
    return (
        name,
        file if isinstance(file, str) else "",
        line if type(line) is int and -(2**62) < line < 2**62 else -1,
    )


def _from_tree(root: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any]]:
    """Walk the renderer's frame tree iteratively: parent, depth, frame code, time of nodes."""
    codes: dict[tuple[str, str, int], int] = {}
    parent: list[int] = []
    depth: list[int] = []
    key: list[int] = []
    time: list[float] = []
    todo: list[tuple[Any, int, int]] = [(root, -1, 0)]
    while todo:
        node, up, level = todo.pop()
        if not isinstance(node, dict):
            raise LoadError("it is a pyinstrument file with a frame that is not an object")
        me = len(key)
        parent.append(up)
        depth.append(level)
        key.append(codes.setdefault(_identity(node), len(codes)))
        time.append(_seconds(node.get("time"), "frame time"))
        children = node.get("children", [])
        if not isinstance(children, list):
            raise LoadError("it is a pyinstrument file whose frame children are not a list")
        todo.extend((child, me, level + 1) for child in reversed(children))
    return (np.asarray(parent), np.asarray(depth), np.asarray(key),
            np.asarray(time) * 1e9, list(codes))  # fmt: skip


def _identifier(text: Any) -> tuple[str, str, int]:
    """A session stack entry: `function\\0file\\0line`, maybe followed by `\\x01` attributes."""
    if not isinstance(text, str):
        raise LoadError("it is a pyinstrument session whose stacks are not lists of strings")
    parts = text.split("\x01", 1)[0].split("\x00")
    line = parts[2] if len(parts) > 2 else ""
    return (
        parts[0],
        parts[1] if len(parts) > 1 else "",
        int(line) if line.isdigit() and len(line) < 18 else -1,
    )


def _from_records(
    records: Any, stem: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[Any]]:
    """Flat frame codes, stack lengths, weights (ns) and counts of a session's records.

    Like pyinstrument's own `_trim_stem`, the frames above the call that started profiling
    (`start_call_stack`: the thread, pyinstrument's CLI) are dropped, the last one kept.
    """
    if not isinstance(records, list):
        raise LoadError("it is a pyinstrument session without a list of frame records")
    cut = len(stem) - 1 if isinstance(stem, list) and len(stem) > 1 else 0
    head = stem[:cut] if cut else []
    codes: dict[tuple[str, str, int], int] = {}
    flat: list[int] = []
    lengths: list[int] = []
    weights: list[float] = []
    for record in records:
        if not isinstance(record, list) or len(record) != 2 or not isinstance(record[0], list):
            raise LoadError("it is a pyinstrument session with a frame record it cannot read")
        stack = record[0][cut:] if cut and record[0][:cut] == head else record[0]
        flat.extend(codes.setdefault(_identifier(f), len(codes)) for f in stack)
        lengths.append(len(stack))
        weights.append(_seconds(record[1], "record time") * 1e9)
    return (np.asarray(flat, dtype=np.int64), np.asarray(lengths, dtype=np.int64),
            np.asarray(weights, dtype=np.float64), np.ones(len(lengths)), list(codes))  # fmt: skip


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Read a pyinstrument JSON report or saved session into a merged tree."""
    path = Path(path)
    progress(0.0, "reading pyinstrument JSON")
    doc = _read(path)
    if "root_frame" in doc:
        if doc["root_frame"] is None:
            raise EmptyProfile("the pyinstrument report holds no samples")
        parent, depth, key, time, ids = _from_tree(doc["root_frame"])
        items = span_items(parent, depth, key, time)
    elif "frame_records" in doc:
        flat, lengths, weights, counts, ids = _from_records(
            doc["frame_records"], doc.get("start_call_stack")
        )
        items = stack_items(flat, lengths, weights, counts)
    else:
        raise LoadError("it is JSON but neither a pyinstrument report nor a saved session")
    frames = frames_table([i[0] for i in ids], [i[1] for i in ids], [i[2] for i in ids])
    tree = build_tree([items], frames)
    n_samples = doc.get("sample_count")
    if type(n_samples) is not int or n_samples < 0:
        n_samples = int(items.calls[items.level == 0].sum())
    duration = doc.get("duration")
    duration_ns = round(_seconds(duration, "duration") * 1e9) if duration is not None else 0
    threads = pd.DataFrame(
        {"thread": [0], "name": ["(main)"], "samples": [n_samples],
         "weight": [float(tree.metrics["total_ns"][0])]}
    )  # fmt: skip
    progress(1.0, "done")
    return Bundle(
        format=FORMAT,
        path=path,
        tree=tree,
        sampled=SampledProfile(unit="ns", threads=threads, source=NAME),
        counts={"samples": n_samples, "threads": 1, "frames": len(ids)},
        duration_ns=duration_ns,
    )
