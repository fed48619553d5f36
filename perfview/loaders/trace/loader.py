"""Chrome Trace Event loader: torch.profiler / kineto traces and any other producer.

Reads the object form ({"traceEvents": [...], ...}) and the bare-array form, plain or gzip,
including unterminated arrays and files cut mid-event (chrome://tracing tolerates both).
The stages, each a module of this package:

    read → scan → assemble ┐
    read → split → general ┴→ build (lanes, tables, core.nesting) → a Bundle here

* the compiled scanner for files of SCANNER_MIN_BYTES or more: `read.read_mapped` →
  `scan.parallel` (numba, every core, `scan.events` / `scan.tokens`) → `assemble`;
* the general path for small files and whatever the scanner refuses: `read.read_bytes` →
  `split` (events as raw slices) → `general` (msgspec batches, exact `numbers`).

Both give the same `columns.Columns` (tests compare them on every sample), from the one
table of event keys in `fields`. A load's `compiled` argument turns the scanner off (False)
or forces it (True); the CLI, the window and the tests state it, no environment variable does.
"""

from __future__ import annotations

import contextlib
import mmap
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec
import numpy as np

from perfview import readahead, streamed
from perfview.core.model import ArgsStore, Bundle, Timeline, schema
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.core.model.progress import Progress, noop
from perfview.loaders import huge_pages
from perfview.loaders.base import Capabilities, CompiledReader, strip_bom
from perfview.loaders.trace import heap
from perfview.loaders.trace.build import Built, build
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.general import decode_events
from perfview.loaders.trace.numbers import parse_decimal
from perfview.loaders.trace.read import GZIP_MAGIC, read_bytes, read_mapped
from perfview.loaders.trace.split import split_events

if TYPE_CHECKING:
    from perfview.loaders.trace.scan.args import ArgsCompaction
    from perfview.loaders.trace.scan.parallel import Scanned

NAME: Final = "trace"
DESCRIPTION = "a Chrome trace / torch.profiler trace (JSON)"
EXTENSIONS = (".pt.trace.json", ".pt.trace.json.gz", ".json", ".json.gz", ".gz")

SCANNER_MIN_BYTES = 16_000_000  # below this the general path is fast and needs no compiled code
META_MAX_BYTES = 64 * 1024  # top-level keys bigger than this (stackFrames, samples) are dropped
TORCH_KEYS = ("deviceProperties", "distributedInfo", "baseTimeNanoseconds", "schemaVersion")
TORCH_CATS = frozenset(
    {
        "cpu_op", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset", "ac2g",
        "fwdbwd", "python_function", "user_annotation", "gpu_user_annotation",
        "cpu_instant_event", "operator", "runtime", "memcpy", "memset", "async_cpu_to_gpu",
        "xpu_runtime", "xpu_driver", "mtia_runtime", "mtia_ccp_events", "hpu_op",
        "privateuse1_runtime", "privateuse1_driver",
    }
)  # fmt: skip
_EVENT_KEY = re.compile(rb'"(ph|ts|traceEvents)"\s*:')


def sniff(head: bytes, path: Path) -> bool:
    """True when the head looks like trace JSON.

    A leading '{' alone is not enough: a Python 2 pstats dump also starts with '{', so the
    head must be text with an event key ("ph", "ts" or "traceEvents").
    """
    text = strip_bom(head).lstrip()
    if text.startswith(b"["):
        rest = text[1:].lstrip()
        return rest.startswith(b"{") or (not rest and _looks_like_text(head))
    if not text.startswith(b"{"):
        return False
    return _looks_like_text(head[:4096]) and _EVENT_KEY.search(text) is not None


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a multibyte character cut at the end is fine
    return True


def refuse(head: bytes, path: Path) -> str | None:
    """Why a JSON-looking file is not a trace (for the 'unknown format' message), else None."""
    text = strip_bom(head).lstrip()
    if text[:1] in (b"{", b"[") and _looks_like_text(head[:4096]):
        return "it is JSON but not a trace (no traceEvents array and no events with a 'ph' key)"
    return None


def load(
    path: Path, *, progress: Progress = noop, compiled: bool | None = None,
    window: int | None = None,
) -> Bundle:  # fmt: skip
    """Load a Chrome trace file into a Bundle with a Timeline; `compiled`: the compiled
    scanner always (True), never (False), or for files of SCANNER_MIN_BYTES or more (None).
    `window`: the bytes the scanner reads between giving the file's pages back
    (`scan.parallel.WINDOW` when None; tests make it tiny, the tables never depend on it).

    msgspec reports invalid UTF-8 inside a JSON string as UnicodeDecodeError (from 0.23 a
    DecodeError, which the general path raises as the former: `general._raise_if_not_text`)
    and nesting past its depth limit as RecursionError, from any of its decode calls. Both
    mean the file is not a readable JSON trace, so they become LoadError here, once, rather
    than at each call site (found by scripts/probes/fuzz_loaders.py).
    """
    bundle = _guard(
        lambda: _load(Path(path), progress, general=True, compiled=compiled, window=window)
    )
    assert bundle is not None  # the general path always gives a bundle or raises
    return bundle


def load_scanned(
    path: Path, *, progress: Progress = noop, compiled: bool | None = None
) -> Bundle | None:
    """Load with the compiled scanner only; None when the file needs the general path.

    For a background load in the GUI process: the scanner leaves the GIL free, while the
    general path's long msgspec calls (and numba compiling the scanner, right after an
    install) would freeze the GUI thread, so the caller sends what this refuses to a child
    process instead (`service.in_child`). `compiled=False` (the scanner turned off): None.
    """
    if compiled is False:
        return None
    try:
        from perfview.loaders.trace.scan import parallel as trace_parallel
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    if not trace_parallel.compiled():  # compiling would hold the GIL for ~15 s: not here
        return None
    return _guard(lambda: _load(Path(path), progress, general=False, compiled=True))


def _gil_free_load(path: Path, progress: Progress, compiled: bool | None) -> Bundle | None:
    return load_scanned(path, progress=progress, compiled=compiled)


def _scanner_on_disk() -> bool:
    from perfview.loaders.trace.scan import parallel as trace_parallel

    return trace_parallel.compiled()


def _warm_scanner_code() -> None:
    from perfview.loaders.trace.scan import parallel as trace_parallel

    trace_parallel.warm()


SCANNER = CompiledReader(
    what="the trace scanner",
    min_bytes=SCANNER_MIN_BYTES,
    on_disk=_scanner_on_disk,
    warm=_warm_scanner_code,
)
# A trace's columns round-trip through the cache's entry format, so a big one parses in a
# child process; the scanner leaves the GIL, so the window's loads use it in-process.
# A plain trace still downloading is scanned as it arrives (`scan.arrival`).
CAPABILITIES = Capabilities(
    child=True, compiled=SCANNER, gil_free_load=_gil_free_load, streams=True
)


def _guard(fn: Callable[[], Bundle | None]) -> Bundle | None:
    """msgspec's and Python's decoding errors as LoadError (see `load`)."""
    try:
        return fn()
    except UnicodeDecodeError as exc:
        raise LoadError(
            "it is not a readable trace: a JSON string in it holds bytes that are not UTF-8 text"
        ) from exc
    except RecursionError as exc:
        raise LoadError("it is not a readable trace: its JSON is nested too deeply") from exc


def _load(
    path: Path, progress: Progress, *, general: bool, compiled: bool | None,
    window: int | None = None,
) -> Bundle | None:  # fmt: skip
    """read → scan (or split → general) → build → a Bundle; None when `general` is False
    and the file needs the general path. A file of several GB loads with numpy's huge-page
    advice on (`huge_pages`: a quarter of such a load's CPU was page faults)."""
    with huge_pages.for_big_file(_size(path)):
        return _read_scan_build(path, progress, general=general, compiled=compiled, window=window)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # reading it says why
        return 0


def _read_scan_build(
    path: Path, progress: Progress, *, general: bool, compiled: bool | None,
    window: int | None = None,
) -> Bundle | None:  # fmt: skip
    progress(0.0, "reading")
    warming = _warm_scanner(path, compiled, gil_free=not general)
    text: bytearray | mmap.mmap
    arriving = _arriving(path) if warming is not None else None
    if arriving is not None:  # a download: scanned while it arrives
        text, read_warning = arriving.map, ""
    elif warming is not None:
        text, read_warning = read_mapped(path, progress)
    else:
        text, read_warning = read_bytes(path, progress, 0.2)
    warnings = [read_warning] if read_warning else []
    if warming is not None:
        warming.join()
    scanned = _scan(text, progress, window, arriving) if warming is not None else None
    if scanned is None and not general:
        return None
    if scanned is None and isinstance(text, mmap.mmap):  # the general path edits a bytearray
        mapped, text = text, bytearray(text)
        mapped.close()
    if scanned is not None:  # the compiled scanner read it all
        cols, top, early = scanned.cols, scanned.top, scanned.args
        release = scanned.release_unkept
        give_back, let_go = scanned.give_back, scanned.let_go
        warnings += scanned.warnings
        del scanned
        built, args = _build_scanned(text, cols, progress, early, release, give_back, let_go)
        del text
    else:
        assert isinstance(text, bytearray)  # maps were turned into bytearrays above
        box = [text]
        del text  # `_general` holds the only reference (see there)
        cols, top, built, args = _general(box, progress, warnings)
    return _bundle(path, cols, top, built, args, warnings, progress)


def _build_scanned(
    text: bytearray | mmap.mmap, cols: Columns, progress: Progress,
    early: ArgsCompaction | None = None, release_unkept: Callable[[], None] | None = None,
    give_back: Callable[[], None] | None = None,
    let_go: Callable[[Sequence[str]], None] | None = None,
) -> tuple[Built, ArgsStore]:  # fmt: skip
    """Build from the scanner's columns; the file text becomes the args blob, in place, on
    a thread beside the build's first stage (times, pid/tid: 0.1 s each at 1 GB), and gives
    the rest of its pages back before the build's bigger tables (a 1 GB NCCL trace holds
    0.3 GB of args): building them before that made the text and the build's temporaries
    peak together, 2.5x the file. A mapped file's args were copied out from the scan on
    (`early`). `give_back`: the columns' pages where they lie in a file (`Scanned`), given
    back between the build's stages; `let_go`: a column's pages, once the build read it."""
    from perfview.loaders.trace.scan.args import ArgsCompaction

    _check_events(cols)
    progress(0.85, "building the timeline")
    if early is not None:  # it found the same lengths: one array at the build's peak, not two
        lens = early.lengths()
    else:
        lens = cols.cat_all("arg_lens").astype(np.int64, copy=False)
    starts = cols.cat_all("arg_starts")
    cols.arg_starts.clear()  # the compaction's alone: it drops them once the args are moved
    cols.arg_lens.clear()
    if release_unkept is not None:  # the args' spans are read: nothing reads those rows now
        release_unkept()
    compaction = early or ArgsCompaction(text, (starts, lens))
    del text, starts, lens  # the compaction's (narrowed once the args are moved)
    with heap.reuse_freed(cols.n):  # malloc reuses the build's freed temporaries
        built = build(
            cols, compiled=True, settle=compaction.settle, give_back=give_back, let_go=let_go,
            consume=True,
        )  # fmt: skip
    blob, starts = compaction.finish()
    index = built.arg_index
    lens = compaction.lengths()[index].astype(np.int64, copy=False)
    return built, ArgsStore(blob=cast(bytes, blob), starts=starts[index], lens=lens)


def _general(
    box: list[bytearray], progress: Progress, warnings: list[str]
) -> tuple[Columns, dict[str, msgspec.Raw], Built, ArgsStore]:
    """split → general → build, from the file text in `box` (taken out of it). The raw
    events are views of the text: both are dropped before the args are joined, so the file
    text and the args copies are never all alive at once (peak memory)."""
    buf = box.pop()
    split = split_events(buf)
    warnings += [w for w in split.warnings if w]
    if not split.events:
        raise EmptyProfile("the trace has no events")
    cols = decode_events(buf, split.events, progress, 0.3, 0.8)
    top = split.top
    del split, buf
    blob_parts = b"".join(cols.arg_blobs)
    cols.arg_blobs.clear()
    _check_events(cols)
    progress(0.85, "building the timeline")
    built = build(cols)
    lens = cols.cat_all("arg_lens").astype(np.int64, copy=False)
    return cols, top, built, _args_store(blob_parts, lens, built.arg_index)


def _bundle(
    path: Path, cols: Columns, top: dict[str, msgspec.Raw], built: Built, args: ArgsStore,
    warnings: list[str], progress: Progress,
) -> Bundle:  # fmt: skip
    """The Timeline and its Bundle from the built tables (refused when nothing shows)."""
    if built.counts["slices"] + built.counts["async"] + len(built.instants) == 0 and (
        len(built.counters) + len(built.memory) == 0
    ):
        raise EmptyProfile("the trace has no slices, instants or counters to show")
    meta = _meta(top)
    base = meta.get("baseTimeNanoseconds")
    base_ns = base if isinstance(base, int) and not isinstance(base, bool) else 0
    meta["torch"] = _is_torch(meta, cols)
    progress(0.95, "checking tables")
    timeline = Timeline(
        events=built.events,
        lanes=built.lanes,
        instants=built.instants,
        counters=built.counters,
        flows=built.flows,
        memory=built.memory,
        args=args,
        origin_ns=base_ns + built.t0_ns,
        duration_ns=built.duration_ns,
        meta=meta,
    )
    _validate(timeline)
    progress(1.0, "done")
    return Bundle(
        format=NAME,
        path=path,
        timeline=timeline,
        counts=built.counts,
        duration_ns=built.duration_ns,
        warnings=warnings + built.warnings,
    )


def _check_events(cols: Columns) -> None:
    if cols.n == 0:
        raise EmptyProfile("the trace has no events (the list holds no event objects)")


def _warm_scanner(
    path: Path, compiled: bool | None, *, gil_free: bool = False
) -> threading.Thread | None:
    """Start loading the compiled scanner while the file is read (both take a while on a
    big file: numba's import and JIT start-up hold the GIL little, reading none); None when
    the scanner does not read this file (`compiled`, else its size)."""
    if not SCANNER.used_for(path, compiled):
        return None

    def warm() -> None:
        with contextlib.suppress(Exception):  # any failure shows again, and is handled, later
            from perfview.loaders.trace import idmerge, kernels
            from perfview.loaders.trace.scan import parallel as trace_parallel

            trace_parallel.warm()
            # build's compiled steps: a few ms each from numba's cache; compiled here (a few
            # seconds, once) only off the window's process (`gil_free`: a GIL-free load),
            # where the loader keeps its numpy steps until they are on disk
            if not gil_free or (idmerge.ready() and kernels.ready()):
                idmerge.warm()
                kernels.warm()

    thread = threading.Thread(target=warm, name="perfview-warm", daemon=True)
    thread.start()
    return thread


def _arriving(path: Path) -> streamed.Arriving | None:
    """The download arriving at `path` (`perfview.streamed`), its map taken, when it is a
    plain file (gzip is inflated from the whole file)."""
    arriving = streamed.pending(path)
    if arriving is None or arriving.head(2) == GZIP_MAGIC:
        return None
    return streamed.take(path)


def _scan(
    buf: bytearray | mmap.mmap, progress: Progress, window: int | None,
    arriving: streamed.Arriving | None = None,
) -> Scanned | None:  # fmt: skip
    """The compiled scanner's columns (the caller chose it: `_warm_scanner`), or None for the
    general path (odd content, or numba missing). `arriving`: `buf` is still downloading;
    whole when this returns (the general path and the cache read the whole file)."""
    try:
        from perfview.loaders.trace.scan import parallel as trace_parallel
    except ImportError:  # pragma: no cover - numba is a dependency, but keep working without
        if arriving is not None:
            arriving.whole()
        return None
    ran, ahead = readahead.followed(buf)
    if ran and (ahead is None or isinstance(ahead, trace_parallel.Scanned)):
        return ahead  # the CLI scanned it while importing (`cli._scan_ahead`)
    progress(0.2, "scanning events")
    scanned = trace_parallel.scan(
        buf, progress, 0.2, 0.8, window=window or trace_parallel.WINDOW, arriving=arriving
    )
    if arriving is not None:
        arriving.whole()  # raises the download's failure, if any
    return scanned


def _meta(top: dict[str, msgspec.Raw]) -> dict[str, Any]:
    """Small top-level keys decoded (deviceProperties, distributedInfo, displayTimeUnit, …)."""
    meta: dict[str, Any] = {}
    for key, raw in top.items():
        if len(raw) > META_MAX_BYTES:
            continue
        try:
            meta[key] = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        if key == "baseTimeNanoseconds" and not isinstance(meta[key], int):
            values, ok = parse_decimal(bytes(raw), 1, 0)  # exact even when written as a float
            meta[key] = int(values[0]) if ok[0] else 0
    return meta


def _is_torch(meta: dict[str, Any], cols: Columns) -> bool:
    """kineto wrote it: its top-level keys, its categories or its profiler spans."""
    if any(key in meta for key in TORCH_KEYS[:3]):
        return True
    if any(isinstance(c, str) and c.lower() in TORCH_CATS for c in cols.cats.values):
        return True
    return any(
        isinstance(n, str) and (n.startswith("ProfilerStep#") or n.startswith("PyTorch Profiler"))
        for n in cols.names.values
    )


def _args_store(blob: bytes, lens: np.ndarray, index: np.ndarray) -> ArgsStore:
    """The kept args (file order, back to back in `blob`) found by events-table row."""
    starts = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    return ArgsStore(blob=blob, starts=starts[index], lens=lens[index])


def _validate(tl: Timeline) -> None:
    try:
        schema.validate_tables({name: getattr(tl, name) for name in schema.TIMELINE_SCHEMAS})
    except ValueError as exc:  # pragma: no cover - a bug, not a user error
        raise LoadError(f"the trace could not be converted ({exc})") from exc


__all__ = [
    "CAPABILITIES",
    "DESCRIPTION",
    "EXTENSIONS",
    "NAME",
    "SCANNER",
    "load",
    "load_scanned",
    "refuse",
    "sniff",
]
