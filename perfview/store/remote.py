"""Remote paths (`s3://`, `gs://`, `az://`, `hdfs://`, `http(s)://`, `file://`): the one place
a URL becomes something perfview can read.

A remote file is downloaded into the cache in 8 MB pieces under a temporary name, renamed into
place once whole and checked against the listing's size (`remote_download`: how one file
arrives; this module: what a URL lists and where its files go). Opened alone (`resolve(url,
stream=True)`: the command line, the window, `perfview mcp`), it is parsed while it arrives
by a loader that can (`perfview.streamed`: the trace scanner reads each piece as it lands),
and by any other once it is whole. A folder (a log directory, a job's ranks) is mirrored file
by file, several downloads at a time. The mirror sits under
`<perfview cache>/remote/<scheme>/<host>/<path>`, so a run keeps its folder and file names,
and each file has a hidden stamp beside it: the URL, its ETag (or the filesystem's version,
else its modification time) and size. A file whose stamp matches the
listing is not fetched again, so a reopen costs one listing, and the parsed columns and
per-rank reductions cached for the mirrored file hit as for any local file.

The filesystems are fsspec's (`perfview[remote]`: fsspec, s3fs, gcsfs, adlfs); credentials,
endpoints and regions come from each one's usual environment and config files
(`AWS_PROFILE`, `AWS_ENDPOINT_URL_S3`, `GOOGLE_APPLICATION_CREDENTIALS`,
`AZURE_STORAGE_CONNECTION_STRING`, `FSSPEC_<PROTOCOL>_<OPTION>`, ...): perfview passes none
and stores none. Without the extra, a URL gets one sentence saying how to install it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from perfview import readahead
from perfview.core.analysis.torch.ranks import TRACE_RE
from perfview.core.model.errors import LoadError
from perfview.store import mirror_files, remote_download
from perfview.store.remote_download import RemoteFile

INSTALL = "pip install 'perfview[remote]'"
# A scheme of two letters or more: `C://x` is a Windows drive, not a URL.
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+)://")
_SAFE = re.compile(r"[^A-Za-z0-9._@=+,-]")
DOWNLOADS = 8  # files fetched at once when mirroring a folder
MAX_FILES = 20_000  # as `jobs.logdir.MAX_FILES`: a whole bucket is not a log directory
STAMP_SUFFIX = mirror_files.STAMP_SUFFIX
FOLDER_STAMP = ".perfview-remote-folder"  # in a mirrored folder's root: the URL it mirrors
# What says a remote file changed, most specific first: S3/Azure/GCS ETags and versions,
# then modification times (HDFS, SFTP, local).
_VERSION_KEYS = (
    "ETag", "etag", "md5Hash", "generation", "VersionId", "version_id", "LastModified",
    "last_modified", "Last-Modified", "updated", "mtime", "modified", "created",
)  # fmt: skip
_MTIME_KEYS = ("LastModified", "last_modified", "updated", "mtime", "modified")
Progress = Callable[[int, int], None]


def is_url(source: object) -> bool:
    """Whether `source` is a URL (a `str`: a `Path` has already folded `s3://` to `s3:/`)."""
    return isinstance(source, str) and _URL.match(source) is not None


def scheme_of(url: str) -> str:
    match = _URL.match(url)
    return match["scheme"].lower() if match else ""


def resolve(
    source: str | os.PathLike[str], progress: Progress | None = None, *, stream: bool = False
) -> Path:
    """The local path to read for `source`: itself when it is a path, the local file of a
    `file://` URL, else the cached mirror of the remote file or folder (fetched when it is
    missing or stale). `stream`: a single file's download is started on a thread and the
    path returned at once, for the load service to read while it arrives
    (`perfview.streamed`; the caller must load it through the service). LoadError, one
    sentence, when it cannot be read."""
    if not is_url(source):
        return Path(source)
    url = str(source)
    if scheme_of(url) == "file":
        return Path(url2pathname(urlsplit(url).path))
    fs, root = _filesystem(url)
    info = remote_download.call(url, fs.info, root)
    if _is_folder(url, fs, root, info):
        mirror_tree(url, progress)
        return mirror_dir(url)
    if stream:
        return remote_download.fetching(fs, _remote_file(url, "", info), mirror_dir(url))
    local = remote_download.fetched(fs, _remote_file(url, "", info), mirror_dir(url))
    remote_download.bound_cache([local])
    return local


def list_traces(url: str) -> list[str]:
    """The URLs of the trace files under `url` (a folder), or `[url]` for a file: what a
    cluster's workers are given to read themselves."""
    fs, root = _filesystem(url)
    info = remote_download.call(url, fs.info, root)
    if not _is_folder(url, fs, root, info):
        return [url]
    return [f.url for f in _listing(url)]


def mirror_tree(url: str, progress: Progress | None = None) -> Path:
    """Fetch the trace files under the folder `url` that the mirror lacks or holds stale, and
    drop mirrored files the folder no longer holds; returns the mirror's root."""
    fs, _root = _filesystem(url)
    files = _listing(url)
    top = mirror_dir(url)
    wanted = {_local(top, f.rel) for f in files}
    for stale in mirror_files.mirrored(top) - wanted:
        mirror_files.drop(stale)
    done = 0
    lock = threading.Lock()

    def fetch(file: RemoteFile) -> Path:
        nonlocal done
        local = remote_download.fetched(fs, file, _local(top, file.rel))
        with lock:
            done += 1
            if progress is not None:
                progress(done, len(files))
        return local

    with ThreadPoolExecutor(max_workers=min(DOWNLOADS, max(1, len(files)))) as pool:
        kept = list(pool.map(fetch, files))
    remote_download.bound_cache(kept)
    top.mkdir(parents=True, exist_ok=True)
    marker = top / FOLDER_STAMP  # what a window following the folder lists (`mirrored_from`)
    if not marker.is_file() or mirrored_from(top) != url:
        tmp = marker.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"url": url}))
        os.replace(tmp, marker)
    return top


def mirrored_from(folder: Path) -> str | None:
    """The URL whose mirror `folder` is (`mirror_tree` left its marker there), else None."""
    try:
        url = json.loads((Path(folder) / FOLDER_STAMP).read_text()).get("url")
    except (OSError, ValueError, AttributeError):
        return None
    return url if isinstance(url, str) and is_url(url) else None


def url_for(local: str | os.PathLike[str]) -> str | None:
    """The URL a mirrored file or folder was fetched from, else None (a local path): what a
    command's output names, so `perfview summary s3://…` speaks of the URL the user typed,
    not of the cache folder it was read from."""
    path = Path(local)
    if path.is_dir():
        return mirrored_from(path)
    try:
        url = json.loads(mirror_files.stamp_of(path).read_text()).get("url")
    except (OSError, ValueError, AttributeError):
        return None
    return url if isinstance(url, str) and is_url(url) else None


Settled = dict[str, tuple[int, str]]  # a folder's trace files by path: (size, version)


def mirror_settled(url: str, before: Settled) -> tuple[Settled, list[Path]]:
    """One look at a followed folder (`remote_follow`): list it, and fetch into the mirror
    the trace files that are new or changed there and have stopped changing, i.e. show the
    same size and version as in the listing before (`before`); returns this listing's
    sizes and versions and the files fetched. An object still being written (a growing
    file on HDFS or a local disk) waits one more listing; whether a fetched file is whole
    (its JSON closes) is for the reader (`jobs.logdir.is_whole`)."""
    fs, _root = _filesystem(url)
    top = mirror_dir(url)
    now: Settled = {}
    fetched: list[Path] = []
    for file in _listing(url):
        now[file.rel] = (file.size, file.version)
        if before.get(file.rel) != now[file.rel]:
            continue  # new or changed since the last listing: settled at the next
        local = _local(top, file.rel)
        if file.version and remote_download.is_current(local, remote_download.stamp(file)):
            continue
        if not file.version and local.is_file() and file.size in (0, local.stat().st_size):
            continue  # no version to tell (an HTTP index: no size either): kept as fetched
        fetched.append(remote_download.fetched(fs, file, local))
    return now, fetched


def mirror_dir(url: str) -> Path:
    """Where the mirror of `url` lives: `<cache>/remote/<scheme>/<host>/<path>`, every part
    made a plain file name (a `..` in a key never leaves the mirror)."""
    parts = urlsplit(url)
    names = [parts.scheme.lower(), parts.netloc or "_"]
    names += [p for p in PurePosixPath(parts.path).parts if p != "/"]
    if parts.query:
        names[-1] += "@" + hashlib.sha256(parts.query.encode()).hexdigest()[:12]
    return Path(readahead.cache_root(), mirror_files.REMOTE, *map(_safe, names))


def _safe(name: str) -> str:
    clean = _SAFE.sub("_", name)
    return "_" if clean in ("", ".", "..") else clean


def _local(top: Path, rel: str) -> Path:
    return top.joinpath(*(_safe(p) for p in rel.split("/") if p))


def _filesystem(url: str) -> tuple[Any, str]:
    """fsspec's filesystem for `url` and the path in it, configured from its environment."""
    scheme = scheme_of(url)
    try:
        import fsspec
    except ImportError as exc:
        raise LoadError(f"reading {scheme}:// paths needs the 'remote' extra: {INSTALL}") from exc
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError as exc:  # the filesystem's own package: s3fs, gcsfs, adlfs, …
        raise LoadError(
            f"reading {scheme}:// paths needs a package that is not installed ({exc}): {INSTALL}"
        ) from exc
    except ValueError as exc:  # a scheme no installed fsspec filesystem knows
        raise LoadError(
            f"perfview cannot read {scheme}:// paths: fsspec knows no such filesystem "
            f"({INSTALL} reads s3://, gs://, az://, hdfs:// and http(s)://)"
        ) from exc
    # Listings and file details are cached per filesystem object (s3fs's dircache): every
    # open asks the store afresh, or a changed object would be read against its old ETag.
    # All of it, not `path`'s: the listing of a folder below it would hide a new file there.
    fs.invalidate_cache()
    return fs, str(path)


def _is_folder(url: str, fs: Any, root: str, info: dict[str, Any]) -> bool:
    """A folder: the filesystem says so, or (HTTP, which has no folders) the URL is an HTML
    page whose links fsspec lists as its files (a server's directory index)."""
    if info.get("type") == "directory":
        return True
    html = str(info.get("mimetype") or "").startswith("text/html")
    return html and bool(remote_download.call(url, fs.isdir, root))


def _version(info: dict[str, Any]) -> str:
    for key in _VERSION_KEYS:
        value = info.get(key)
        if value not in (None, ""):
            return f"{key}={value}"
    return ""


def _mtime(info: dict[str, Any]) -> float | None:
    for key in _MTIME_KEYS:
        value = info.get(key)
        if isinstance(value, dt.datetime):
            return value.timestamp()
        if isinstance(value, int | float) and value > 0:
            return float(value)
    return None


def _remote_file(url: str, rel: str, info: dict[str, Any]) -> RemoteFile:
    size = int(info.get("size") or 0)
    return RemoteFile(url, rel, size, _version(info), _mtime(info))


def _listing(url: str) -> list[RemoteFile]:
    """Every trace file under the folder `url`, hidden names left out, by path."""
    fs, root = _filesystem(url)
    found: dict[str, dict[str, Any]] = remote_download.call(url, fs.find, root, detail=True)
    base = url.rstrip("/")
    prefix = root.rstrip("/") + "/"
    files: list[RemoteFile] = []
    for name, info in sorted(found.items()):
        if info.get("type") == "directory" or not name.startswith(prefix):
            continue
        rel = name[len(prefix) :]
        parts = rel.split("/")
        if any(p.startswith(".") for p in parts) or not TRACE_RE.search(parts[-1]):
            continue
        files.append(_remote_file(f"{base}/{rel}", rel, info))
        if len(files) > MAX_FILES:
            raise LoadError(f"{url} holds more than {MAX_FILES:,} trace files: open one run")
    if not files:
        raise LoadError(f"{url} holds no .json / .json.gz trace files")
    return files


def url_name(source: str) -> str:
    """The file name of a URL or a path (`s3://b/run/rank0.json` → `rank0.json`)."""
    return PurePosixPath(urlsplit(source).path).name if is_url(source) else Path(source).name


def resolve_all(sources: Iterable[str]) -> list[str]:
    """`resolve` of each source, as text (a command line's arguments)."""
    return [str(resolve(s)) if is_url(s) else s for s in sources]


__all__ = [
    "INSTALL",
    "is_url",
    "list_traces",
    "mirror_dir",
    "mirror_settled",
    "mirror_tree",
    "mirrored_from",
    "resolve",
    "resolve_all",
    "scheme_of",
    "url_for",
    "url_name",
]
