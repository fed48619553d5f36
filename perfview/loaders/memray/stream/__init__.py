"""perfview's own reader of memray's capture record stream (header versions 9 to 13).

memray reads only the one format version it writes (1.4-1.6: 9, 1.7-1.10: 10, 1.11-1.18:
11, 1.19: 12, 1.20: 13), so captures from a colleague's or a CI machine's memray often do not
open with the installed one. This package reads them all without memray: the header
(`loaders.memray.header`), the LZ4-framed or raw stream in chunks on a worker thread
(`source`), and a numba-compiled replay of every record (`decode`: one loop for every
version, from its table of encodings; `kernel`, `tables`) that reduces as it goes into the
tables of `MemrayCapture` (`assemble`):
allocations alive at the heap high-water mark, leaks, per-snapshot allocation lifetimes,
memory snapshots and per-thread counts, equal to what memray's own reader gives.

Not read here: pre-aggregated captures (`memray run --aggregate`) and native frames (native
stacks need the traced binaries' symbols; Python frames are kept).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from perfview.core.model.errors import LoadError
from perfview.core.model.memray_model import MemrayCapture
from perfview.core.model.progress import Progress, noop
from perfview.loaders.memray import header as H

VERSIONS = H.VERSIONS


def read_stream(path: Path, progress: Progress = noop) -> MemrayCapture:
    """Read and reduce a capture of format version 9 to 13 (LoadError when it cannot).

    The replay's modules are imported here, not with the package: they load numba (~0.2 s),
    and the loader registry imports this package to sniff files, also when a window only
    opens a `.prof`."""
    from perfview.loaders.memray.stream.assemble import capture
    from perfview.loaders.memray.stream.replay import Damaged, State, replay
    from perfview.loaders.memray.stream.source import chunks

    path = Path(path)
    size = path.stat().st_size
    blocks = chunks(path)
    try:
        head, rest, done = _header(blocks)
        if head.file_format != H.ALL_ALLOCATIONS:
            raise LoadError(
                "it is a pre-aggregated memray capture (memray run --aggregate), which perfview "
                "reads only through memray itself"
            )
        state = State(head)
        progress(0.05, "replaying allocations")
        replay(state, _chain((rest, done), blocks), size, progress)
    except H.Truncated as exc:
        raise LoadError(
            "the memray capture is cut short before its first records (an unfinished copy?)"
        ) from exc
    except Damaged as exc:
        raise LoadError(f"the memray capture is damaged ({exc})") from exc
    except ValueError as exc:  # no memray magic, or a format version not read here
        raise LoadError(f"it is not a memray capture this reader knows ({exc})") from exc
    except (OSError, RuntimeError) as exc:  # lz4: a damaged frame
        raise LoadError(f"the memray capture could not be decompressed ({str(exc)[:160]})") from exc
    finally:
        blocks.close()
    progress(0.88, "tables")
    return capture(state)


def _header(blocks: Iterator[tuple[bytes, int]]) -> tuple[H.Header, bytes, int]:
    """The header, the stream bytes after it in the chunks read so far, and the compressed
    bytes read (chunks are joined only until the header is whole)."""
    data, read = b"", 0
    for block, done in blocks:
        data += block
        read = done
        try:
            head = H.parse(data)
        except H.Truncated:
            continue
        return head, data[head.size :], read
    if not data:  # an LZ4 frame cut inside its first block decodes to nothing
        raise H.Truncated("nothing decoded")
    head = H.parse(data)  # raises Truncated: the file ends inside its header
    return head, data[head.size :], read


def _chain(
    first: tuple[bytes, int], rest: Iterator[tuple[bytes, int]]
) -> Iterator[tuple[bytes, int]]:
    yield first
    yield from rest
