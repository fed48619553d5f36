"""A CUDA memory snapshot read without unpickling it: the compiled walker's path.

`cuda_snapshot.load` tries this first for big files: `pickle_walk.walk_file` turns the pickle
into an object graph (arrays; no Python object per pickled object), `cuda_walk.extract` and
`cuda_stacks.intern_stacks` read the snapshot's columns from it, and this module assembles the
very `CudaSnapshot` that `snapshot_from_data` builds from the unpickled dicts (the tests hold
the two paths equal on every sample and fixture). Anything this path does not model raises
`Unsupported`, and the loader then takes the restricted unpickler's path, so what a file
means never depends on which path read it.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.progress import Progress, noop
from perfview.loaders.cuda_snapshot import columns as cuda_columns
from perfview.loaders.cuda_snapshot import stacks as cuda_stacks
from perfview.loaders.cuda_snapshot import walk as cuda_walk
from perfview.loaders.cuda_snapshot.pickle_walk import Graph, Unsupported, walk_file
from perfview.loaders.cuda_snapshot.pickle_walk import kernel as kn
from perfview.loaders.cuda_snapshot.pickle_walk.objects import items, to_python

_BLOCK_KEYS = ("address", "size", "requested_size", "state", "frames")
_ENTRY_KEYS = ("action", "addr", "size", "stream", "time_us", "frames")
_FRAME_KEYS = ("name", "filename", "line")


def load_snapshot(path: Path, progress: Progress = noop) -> tuple[CudaSnapshot, int]:
    """(snapshot, decoded bytes) of the pickle at `path`; Unsupported or LoadError."""
    g = walk_file(path, progress, 0.02, 0.7)
    progress(0.72, "reading segments and trace entries")
    return snapshot_from_graph(g, max_items=g.size), g.size


def _top(g: Graph, strings: list[Any]) -> dict[str, tuple[int, int]]:
    kind, node = g.root
    if kind != kn.K_DICT:
        raise Unsupported("the pickle holds no dict")
    pairs = items(g, node)
    top: dict[str, tuple[int, int]] = {}
    for i in range(0, len(pairs), 2):
        (kk, kv), value = pairs[i], pairs[i + 1]
        if kk != kn.K_STR:
            raise Unsupported("a top-level key that is not text")
        top[strings[kv]] = value
    return top


def _key_ids(g: Graph, strings: list[Any], names: tuple[str, ...]) -> np.ndarray:
    n = int(g.st[kn.STRS])
    ids = {s: i for i, s in enumerate(strings[:n]) if g.sisstr[i] and isinstance(s, str)}
    return np.array([ids.get(name, -1) for name in names], dtype=np.int64)


def snapshot_from_graph(g: Graph, max_items: int) -> CudaSnapshot:
    """The CudaSnapshot `snapshot_from_data(unpickled, max_items=...)` would build."""
    strings = g.decode()
    top = _top(g, strings)
    seg_kind, seg_node = top.get("segments", (kn.K_MISSING, 0))
    dt_kind, dt_node = top.get("device_traces", (kn.K_NONE, 0))
    if seg_kind != kn.K_LIST or dt_kind not in (kn.K_NONE, kn.K_LIST):
        raise Unsupported("no segments list, or device_traces that is neither a list nor None")
    keys = _key_ids(g, strings, cuda_walk.KEYS)
    nodes, runs = int(g.st[kn.NODES]), int(g.st[kn.RUNS])
    graph = (g.nkind[:nodes], g.nfirst[:nodes], g.rn[:runs], g.rs[:runs], g.rl[:runs],
             g.nitems[:nodes], g.ik, g.iv)  # fmt: skip
    out = cuda_walk.extract(
        keys[:11], _key_ids(g, strings, _BLOCK_KEYS), _key_ids(g, strings, _ENTRY_KEYS),
        seg_node, dt_kind, dt_node, max_items, *graph,
    )  # fmt: skip
    status, seg, seg_type, seg_exp, blk, blk_state, ent, action = out[:8]
    ref_k, ref_v, seg_ref, blk_ref, nref, _n, has_time = out[8:]
    if status != cuda_walk.OK:
        raise Unsupported("a field the compiled reader leaves to the unpickler")
    ok, stacks, frames, offsets, flat = cuda_stacks.intern_stacks(
        ref_k, ref_v, _key_ids(g, strings, _FRAME_KEYS), nodes, runs, g.nfirst[:nodes],
        g.nlast[:nodes], g.rn[:runs], g.rs[:runs], g.rl[:runs], g.rc[:runs], g.ik, g.iv,
    )  # fmt: skip
    if not ok:
        raise Unsupported("a frame field the compiled reader leaves to the unpickler")
    settings: Any = {}
    kind, value = top.get("allocator_settings", (kn.K_NONE, 0))
    if kind == kn.K_DICT:
        settings = to_python(g, kind, value)
    text = np.array(strings, dtype=object)
    # Empty tables exactly as the unpickler's path makes them (their dtypes come from there).
    no_seg, no_blk = cuda_columns._segments([], cuda_columns._Interner())
    return CudaSnapshot(
        segments=_segments(seg, seg_type, seg_exp, stacks[seg_ref], text)
        if len(seg_type)
        else no_seg,
        blocks=_blocks(blk, blk_state, stacks[blk_ref], text) if len(blk_state) else no_blk,
        trace=_trace(ent, action, stacks[nref:], text) if len(action) else _no_trace(),
        frames=pd.DataFrame(
            {
                "name": pd.Series(text[frames[0]], dtype=object),
                "file": pd.Series(text[frames[1]], dtype=object),
                "line": frames[2].astype(np.int64),
            }
        ),
        stack_offsets=offsets.astype(np.int64),
        stack_frames=flat.astype(np.int32),
        has_time=bool(has_time),
        keys=list(top),
        allocator_settings=settings,
    )


def _no_trace() -> pd.DataFrame:
    return cuda_columns._traces([], cuda_columns._Interner(), noop)[0]


def _categorical(sids: np.ndarray, text: np.ndarray) -> Any:
    """The categorical `pd.Categorical([str values])` / `.astype("category")` makes, from
    string ids (at least one): categories as those constructors infer and sort them."""
    used = np.flatnonzero(np.bincount(sids))  # np.unique(sids) without sorting millions
    values = list(text[used])
    cats = pd.Categorical(values).categories
    lookup = np.zeros(int(used[-1]) + 1, dtype=np.int64)
    lookup[used] = cats.get_indexer(pd.Index(values, dtype=cats.dtype))
    return pd.Categorical.from_codes(lookup[sids], dtype=pd.CategoricalDtype(cats, ordered=False))


def _segments(seg: np.ndarray, kind: np.ndarray, exp: np.ndarray, stack: np.ndarray,
              text: np.ndarray) -> pd.DataFrame:  # fmt: skip
    return pd.DataFrame(
        {
            "segment": np.arange(seg.shape[1], dtype=np.int64),
            "device": seg[0],
            "address": seg[1],
            "total_bytes": seg[2],
            "allocated_bytes": seg[3],
            "active_bytes": seg[4],
            "requested_bytes": seg[5],
            "stream": seg[6],
            "segment_type": _categorical(kind, text),
            "is_expandable": exp,
            "stack": stack.astype(np.int32),
        }
    )


def _blocks(blk: np.ndarray, state: np.ndarray, stack: np.ndarray, text: np.ndarray
            ) -> pd.DataFrame:  # fmt: skip
    return pd.DataFrame(
        {
            "segment": blk[0],
            "device": blk[1],
            "address": blk[2],
            "size_bytes": blk[3],
            "requested_bytes": blk[4],
            "state": _categorical(state, text),
            "stack": stack.astype(np.int32),
        }
    )


def _trace(ent: np.ndarray, action: np.ndarray, stack: np.ndarray, text: np.ndarray
           ) -> pd.DataFrame:  # fmt: skip
    return pd.DataFrame(
        {
            "device": ent[0],
            "seq": ent[1],
            "action": _categorical(action, text),
            "addr": ent[2],
            "size_bytes": ent[3],
            "stream": ent[4],
            "ts_ns": ent[5],
            "stack": stack.astype(np.int32),
        }
    )


def _kernels() -> tuple[Any, ...]:
    return (kn.walk, kn.rehash, cuda_walk.extract, cuda_stacks.intern_stacks)


def compiled() -> bool:
    """True when the compiled code is on disk already (loading it: ~0.3 s). Compiling it takes
    ~20 s of CPU holding the GIL, once after an install: a GUI should have a child process
    run `warm` then (as `qt.tasks` does for the trace scanner), not its own threads."""
    try:
        return all(os.path.exists(k._cache._cache_file._index_path) for k in _kernels())
    except Exception:  # numba's cache layout is not an API: assume it is there
        return True


def warm() -> None:
    """Compile (or load from disk) every kernel of this path, on a tiny snapshot."""
    frames = [{"name": "f", "filename": "m.py", "line": 1}]
    block = {"address": 1, "size": 2, "requested_size": 2, "state": "active_allocated",
             "frames": frames}  # fmt: skip
    seg = {"device": 0, "address": 1, "total_size": 2, "segment_type": "small", "blocks": [block]}
    entry = {"action": "alloc", "addr": 1, "size": 2, "stream": 0, "time_us": 1, "frames": frames}
    data = {"segments": [seg], "device_traces": [[entry]], "allocator_settings": {"a": 1}}
    with tempfile.TemporaryDirectory(prefix="perfview-warm-") as folder:
        path = Path(folder) / "warm.pickle"
        path.write_bytes(pickle.dumps(data, protocol=4))
        load_snapshot(path)
    table = np.full(8, -1, dtype=np.int64)
    kn.rehash(table, np.zeros(1, dtype=np.uint64), np.zeros(1, dtype=np.int64))
