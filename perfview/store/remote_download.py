"""One remote file into the cache's mirror: the download, apart from where a URL maps to.

`perfview.store.remote` decides WHAT to fetch (a URL's listing, its mirror's paths, whether
the stamp there still matches); this module is HOW one file arrives, the part with its own
failure modes: 8 MB pieces written to a hidden `.NAME.PID.THREAD.part` file, each piece also
handed to a reader parsing it as it lands (`perfview.streamed`'s `Arriving`, for a file
opened alone), renamed into place only once the byte count is the listing's size, and the
`.part` files of processes that died mid-download swept. A partial or failed download is
never in the mirror as if whole, and every failure is one sentence (`call`).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfview import streamed
from perfview.core.model.errors import LoadError
from perfview.store import mirror_files

CHUNK = 8 << 20  # bytes read per request while downloading
_stamp_of = mirror_files.stamp_of


@dataclass(frozen=True)
class RemoteFile:
    """One file of a listing (what a download fetches): its URL, its path under the opened
    URL, size and version."""

    url: str
    rel: str
    size: int
    version: str
    mtime: float | None


def call(url: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """One request, its failure as one sentence (each filesystem raises its own errors)."""
    try:
        return fn(*args, **kwargs)
    except FileNotFoundError as exc:
        raise LoadError(f"{url} does not exist") from exc
    except PermissionError as exc:
        raise LoadError(f"{url}: access denied ({_first_line(exc)})") from exc
    except Exception as exc:  # network, credentials, endpoint: the backend's own words
        raise _failure(url, exc) from exc


def _failure(url: str, exc: BaseException) -> LoadError:
    return LoadError(f"cannot read {url}: {type(exc).__name__}: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def fetched(fs: Any, file: RemoteFile, local: Path) -> Path:
    """`local`, the mirrored copy of `file`, downloaded unless its stamp matches."""
    if not is_current(local, stamp(file)):
        _download(fs, file, local)
        streamed.discard_failed(local)  # a failed streamed download of it: fetched now
    return local


def fetching(fs: Any, file: RemoteFile, local: Path) -> Path:
    """`local`, the mirrored copy of `file`, its download started on a thread when its
    stamp does not match: a loader that reads a file while it arrives parses the pieces
    already there (`perfview.streamed`), any other reader waits until it is whole. A file
    the listing gives no size is downloaded whole here."""
    arriving = streamed.pending(local)
    if arriving is not None and arriving.error is None:
        return local  # already on its way
    if is_current(local, stamp(file)):
        return local
    if file.size <= 0:
        return fetched(fs, file, local)
    for stale in (local, _stamp_of(local)):  # nothing reads the old copy meanwhile
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    arriving = streamed.Arriving(local, file.size)
    streamed.offer(arriving)

    def arrive() -> None:
        try:
            _download(fs, file, local, arriving.add)
        except BaseException as exc:  # any failure: every reader gets one sentence
            arriving.failed(exc if isinstance(exc, LoadError) else _failure(file.url, exc))
        else:
            arriving.finished()
            with contextlib.suppress(OSError):
                bound_cache([local])

    threading.Thread(target=arrive, name="perfview-download", daemon=True).start()
    return local


def stamp(file: RemoteFile) -> dict[str, Any]:
    return {"url": file.url, "version": file.version, "size": file.size}


def _download(
    fs: Any, file: RemoteFile, local: Path, sink: Callable[[bytes], None] | None = None
) -> None:
    """Download `file` to `local` piece by piece (each also handed to `sink`), under a
    temporary name renamed into place only once every byte arrived and the size is the
    listing's: a partial or failed download is never in the mirror as if whole."""
    local.parent.mkdir(parents=True, exist_ok=True)
    _sweep_parts(local)
    part = local.with_name(f".{local.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        source = call(file.url, fs.open, _path_in(fs, file.url), "rb", block_size=CHUNK)
        got = 0
        with source as src, open(part, "wb") as dst:
            while piece := call(file.url, src.read, CHUNK):
                got += len(piece)
                if file.size and got > file.size:
                    break
                dst.write(piece)
                if sink is not None:
                    sink(piece)
        if file.size and got != file.size:
            raise LoadError(
                f"{file.url} changed while it was read ({file.size:,} bytes listed, "
                f"{got:,} read): open it again"
            )
        if file.mtime is not None:  # the file's own time, as a local copy would keep it
            os.utime(part, (file.mtime, file.mtime))
        os.replace(part, local)
    finally:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()
    tmp = _stamp_of(local).with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(stamp(file)))
    os.replace(tmp, _stamp_of(local))
    mirror_files.touch(local, now=True)


def _sweep_parts(local: Path) -> None:
    """Delete the temporary files of earlier downloads of `local` whose process has ended
    (a command that exited mid-download): `.NAME.PID.THREAD.part`."""
    for part in local.parent.glob(f".{glob.escape(local.name)}.*.part"):
        pid = part.name[len(local.name) + 2 :].split(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                part.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def _path_in(fs: Any, url: str) -> str:
    return str(fs._strip_protocol(url))


def is_current(local: Path, stamp: dict[str, Any]) -> bool:
    """Whether the mirrored file is the remote one: same URL, version and size. A listing
    without a version (a plain HTTP server) is never trusted: the file is fetched again."""
    if not stamp["version"]:
        return False
    try:
        kept = json.loads(_stamp_of(local).read_text())
        current = bool(kept == stamp and local.stat().st_size == stamp["size"])
    except (OSError, ValueError):
        return False
    if current:
        mirror_files.touch(local)  # used now: the cache evicts the least recently used
    return current


def bound_cache(keep: Iterable[Path]) -> None:
    """Keep the cache within its size bound, the mirror's files counted with its entries
    (`cache_bound.evict`); what was just fetched (`keep`) stays."""
    from perfview.store import cache_bound

    cache_bound.evict(keep=frozenset(keep))


__all__ = [
    "CHUNK",
    "RemoteFile",
    "bound_cache",
    "call",
    "fetched",
    "fetching",
    "is_current",
    "stamp",
]
