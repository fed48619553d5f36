#!/usr/bin/env python3
"""Hash throughput for the cache's per-column checksums: which hash verifies an entry fastest.

    python scripts/bench/bench_hash.py [--mb 300] [--repeat 5]

The cache (`perfview/store/artifacts.py`) checksums every column file it writes and checks
it on every read, so the hash's speed is paid on each reopen. This hashes one buffer of
`--mb` MB of random bytes (in memory: the disk is not measured) with each candidate and prints
the median GB/s side by side: xxHash3 64/128 (PyPI `xxhash`), BLAKE3 (PyPI `blake3`, single
and multi-threaded), zlib.crc32 and hashlib's blake2b / sha256. Absent packages are skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
import zlib
from collections.abc import Callable

import numpy as np


def candidates() -> dict[str, Callable[[memoryview], object]]:
    out: dict[str, Callable[[memoryview], object]] = {}
    try:
        import xxhash

        out["xxh3_64"] = lambda b: xxhash.xxh3_64_intdigest(b)
        out["xxh3_128"] = lambda b: xxhash.xxh3_128_intdigest(b)
    except ImportError:
        print("xxhash not installed: skipped", file=sys.stderr)
    try:
        import blake3

        out["blake3 (1 thread)"] = lambda b: blake3.blake3(b).digest()
        out["blake3 (all cores)"] = lambda b: blake3.blake3(b, max_threads=-1).digest()
    except ImportError:
        print("blake3 not installed: skipped", file=sys.stderr)
    out["zlib.crc32"] = zlib.crc32
    out["hashlib.blake2b"] = lambda b: hashlib.blake2b(b).digest()
    out["hashlib.sha256"] = lambda b: hashlib.sha256(b).digest()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=300.0, help="buffer size in MB")
    parser.add_argument("--repeat", type=int, default=5, help="runs per hash (median)")
    args = parser.parse_args(argv)
    size = int(args.mb * 1_000_000)
    data = memoryview(np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8).tobytes())
    print(f"buffer: {size / 1e6:.0f} MB in memory, median of {args.repeat} runs")
    print(f"{'hash':<20} {'GB/s':>7} {'ms':>8}  {'ms per GB':>9}")
    for name, fn in candidates().items():
        fn(data[:1024])  # warm-up (imports, first call)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn(data)
            times.append(time.perf_counter() - t0)
        best = statistics.median(times)
        print(
            f"{name:<20} {size / best / 1e9:7.2f} {best * 1e3:8.1f}  {1e9 / size * best * 1e3:9.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
