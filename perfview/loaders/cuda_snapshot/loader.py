"""PyTorch CUDA memory snapshots: the pickle `torch.cuda.memory._dump_snapshot()` writes.

The file is a pickle (protocol 2-5, optionally gzip) of plain dicts and lists:
    {"segments": [{device, address, total_size, allocated_size, active_size, requested_size,
                   stream, segment_type, segment_pool_id, is_expandable, frames?,
                   blocks: [{address, size, requested_size, state, frames}]}],
     "device_traces": [[{action, addr, size, stream, time_us?, frames}], …one list per device],
     "allocator_settings"?: {…}, "external_annotations"?: […]}
Older torch writes no `time_us` and no `allocator_settings`; a snapshot taken without
`_record_memory_history` has empty device trace lists. Each `frames` is a list of
{name, filename, line}, innermost first.

A pickle can name any importable callable and have it called while loading: this loader
never unpickles with `pickle.load`. Files of FAST_MIN_BYTES and more are read by the compiled
walker (`fast`: no Python object per pickled object, imports refused); smaller
ones, and anything the walker leaves aside, by the restricted unpickler (`pickle_data`,
every global refused) and `columns.snapshot_from_data`. Both give the same snapshot.
"""

from __future__ import annotations

import gc
import gzip
import zlib
from pathlib import Path
from typing import Final

from perfview.core.analysis import cuda_memory_views
from perfview.core.model import Bundle
from perfview.core.model.cuda_memory import CudaSnapshot
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import Capabilities, CompiledReader
from perfview.loaders.cuda_snapshot.columns import snapshot_from_data as snapshot_from_data
from perfview.loaders.cuda_snapshot.pickle_data import REFUSED as REFUSED
from perfview.loaders.cuda_snapshot.pickle_data import restricted_loads as restricted_loads

NAME: Final = "cuda_snapshot"
DESCRIPTION = "a PyTorch CUDA memory snapshot (.pickle)"
EXTENSIONS = (".pickle", ".pkl", ".pickle.gz", ".pkl.gz")

# Files this big (on disk) are read by the compiled walker (`_fast`); smaller ones load faster
# than numba imports (tests pass `compiled=True` to hold both paths equal).
FAST_MIN_BYTES = 8 << 20


def _walker_on_disk() -> bool:
    from perfview.loaders.cuda_snapshot import fast

    return fast.compiled()


def _warm_walker() -> None:
    from perfview.loaders.cuda_snapshot import fast

    fast.warm()


WALKER = CompiledReader(
    what="the CUDA snapshot walker",
    min_bytes=FAST_MIN_BYTES,
    on_disk=_walker_on_disk,
    warm=_warm_walker,
)
# parsed in the caller's process: the snapshot's tables do not round-trip through the cache's
# entry format, which a child process hands its result back in
CAPABILITIES = Capabilities(compiled=WALKER)


def sniff(head: bytes, path: Path) -> bool:
    """A pickle (protocol 2+) whose top-level dict starts with the `segments` key."""
    if len(head) < 3 or head[0] != 0x80 or not 2 <= head[1] <= 5:
        return False
    return b"segments" in head[:64] and (b"total_size" in head or b"device_traces" in head)


def refuse(head: bytes, path: Path) -> str | None:
    """Nothing this format's neighbours write needs a special refusal."""
    return None


def _read(path: Path) -> bytes:
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise LoadError("the gzip stream is damaged or truncated") from exc
    return raw


def counts(snap: CudaSnapshot) -> dict[str, int]:
    """The JSON counts of a snapshot (also what `perfview diff` compares)."""
    blocks = snap.blocks
    active = cuda_memory_views.is_in(blocks["state"], ("active_allocated",))
    return {
        "segments": len(snap.segments),
        "blocks": len(blocks),
        "active_bytes": int(blocks["size_bytes"].to_numpy()[active].sum()),
        "reserved_bytes": int(snap.segments["total_bytes"].sum()),
        "trace_entries": len(snap.trace),
    }


def _unpickled(path: Path, progress: Progress) -> CudaSnapshot:
    raw = _read(path)
    progress(0.1, "unpickling (data only)")
    data = restricted_loads(raw)
    try:
        return snapshot_from_data(data, progress, max_items=len(raw))
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as exc:
        raise LoadError(
            f"its structure is not what torch writes ({type(exc).__name__}: {str(exc)[:80]})"
        ) from exc


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Load a snapshot pickle (plain or gzip) without running any code from it; `compiled`:
    the compiled walker first (True), never (False), or for FAST_MIN_BYTES or more (None).

    The cyclic garbage collector is paused meanwhile: unpickling builds millions of dicts and
    lists, and each collection would walk them all again (30 % of a 20 MB load; more as the
    file grows). Nothing here makes cycles; the collector runs again afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(Path(path), progress, compiled)
    finally:
        if was_enabled:
            gc.enable()


def _fast(path: Path, progress: Progress) -> CudaSnapshot | None:
    """The compiled walker's snapshot (`fast`), None where it leaves the file to
    the restricted unpickler. Imported here: numba's import is for big files only."""
    from perfview.loaders.cuda_snapshot import fast, pickle_walk

    try:
        return fast.load_snapshot(path, progress)[0]
    except pickle_walk.Unsupported:
        return None
    except MemoryError as exc:
        raise LoadError("it does not fit in memory") from exc


def _load(path: Path, progress: Progress, compiled: bool | None) -> Bundle:
    path = Path(path)
    progress(0.0, "reading the file")
    path.stat()  # a vanished file is an OSError here, as before the walker was chosen
    snap = _fast(path, progress) if WALKER.used_for(path, compiled) else None
    if snap is None:
        snap = _unpickled(path, progress)
    bundle = Bundle(format=NAME, path=path, counts=counts(snap))
    bundle.cuda_snapshot = snap
    progress(0.95, "building the flame graph and timeline")
    bundle.tree = cuda_memory_views.live_tree(snap)
    for device in cuda_memory_views.trace_devices(snap):
        snap.bands[device] = cuda_memory_views.timeline_bands(snap, device)
    valid = snap.trace["ts_ns"].to_numpy()
    valid = valid[valid >= 0]
    if len(valid):
        bundle.duration_ns = int(valid.max() - valid.min())
    if not len(snap.trace):
        bundle.warnings.append(
            "no allocation history: the snapshot was taken without "
            "torch.cuda.memory._record_memory_history(), so there is no timeline"
        )
    elif not snap.has_time:
        bundle.warnings.append(
            "the trace entries carry no time_us (older torch): the timeline is in event order"
        )
    progress(1.0, "done")
    return bundle
