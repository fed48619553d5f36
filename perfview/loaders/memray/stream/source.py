"""The decompressed record stream of a capture, in chunks, read on a worker thread.

`memray run` compresses its capture into one LZ4 frame after tracking stops (unless
`--no-compress`); python-lz4 decodes it a bounded chunk at a time, without the GIL, while the
caller replays the previous chunk. Raw captures are read as they are.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator
from pathlib import Path

from perfview.loaders.memray import header as H

CHUNK = 16 << 20  # decompressed bytes per chunk
READ = 1 << 20  # compressed bytes per read


def _raw(fh: object, first: bytes) -> Iterator[bytes]:
    yield first
    while block := fh.read(CHUNK):  # type: ignore[attr-defined]
        yield block


def _lz4(fh: object, first: bytes) -> Iterator[bytes]:
    import lz4.frame

    d = lz4.frame.LZ4FrameDecompressor()
    pending = first
    while not d.eof:
        if d.needs_input:
            if not pending:
                pending = fh.read(READ)  # type: ignore[attr-defined]
                if not pending:
                    return  # a frame cut short: what came so far is replayed
            data, pending = pending, b""
        else:
            data = b""
        out = d.decompress(data, max_length=CHUNK)
        if out:
            yield out


def _produce(path: Path, out: queue.Queue[object], stop: threading.Event) -> None:
    try:
        with open(path, "rb") as fh:
            first = fh.read(READ)
            blocks = _lz4(fh, first) if first.startswith(H.LZ4_MAGIC) else _raw(fh, first)
            for block in blocks:
                while not stop.is_set():
                    try:
                        out.put((block, fh.tell()), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        out.put(None)
    except Exception as exc:  # handed to the consumer, which turns it into a LoadError
        out.put(exc)


def chunks(path: Path) -> Generator[tuple[bytes, int], None, None]:
    """(decompressed bytes, compressed bytes read so far) per chunk, decoded ahead on a worker
    thread (at most 3 chunks ahead); stopping early (an exception, a cancel) ends the thread."""
    q: queue.Queue[object] = queue.Queue(maxsize=3)
    stop = threading.Event()
    worker = threading.Thread(target=_produce, args=(path, q, stop), daemon=True)
    worker.start()
    try:
        while True:
            item = q.get()
            if item is None:
                return
            if isinstance(item, Exception):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        worker.join(timeout=5)
