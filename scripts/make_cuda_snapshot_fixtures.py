"""Write tiny CUDA memory snapshot fixtures into tests/data (run: python scripts/make_cuda_...).

They follow the structure `torch.cuda.memory._dump_snapshot()` writes (see
perfview/loaders/cuda_snapshot.py), with known values the tests check:

- cuda_snapshot_new.pickle: newer layout (time_us, allocator_settings), device 0, two segments
  (8 MiB large + 2 MiB small), 3 active blocks = 5 MiB + 1 MiB + 512 KiB, one free block;
  history: 2 segment_alloc, 5 alloc, 2 free_requested/free_completed pairs, 1 oom at the end.
- cuda_snapshot_old.pickle.gz: older layout (no time_us, no allocator_settings), gzip, all
  segments on device 1 and device_traces = 2 empty lists (taken without history).
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path
from typing import Any

MIB = 1 << 20
OUT = Path(__file__).resolve().parent.parent / "tests" / "data"


def _frames(py_line: int, op: str) -> list[dict[str, Any]]:
    return [
        {"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
        {
            "name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc()",
            "filename": "CUDACachingAllocator.cpp",
            "line": 0,
        },
        {"name": f"at::_ops::{op}::call(at::Tensor const&)", "filename": "??", "line": 0},
        {"name": "forward", "filename": "/home/u/model.py", "line": py_line},
        {"name": "train_step", "filename": "/home/u/train.py", "line": 40},
        {"name": "<module>", "filename": "/home/u/train.py", "line": 99},
    ]


def new_layout() -> dict[str, Any]:
    base, small = 0x7F0000000000, 0x7F0010000000
    a1, a2, a3 = base, base + 5 * MIB, small
    blocks_large = [
        {
            "address": a1,
            "size": 5 * MIB,
            "requested_size": 5 * MIB,
            "state": "active_allocated",
            "frames": _frames(10, "mm"),
        },
        {
            "address": a2,
            "size": 1 * MIB,
            "requested_size": MIB,
            "state": "active_allocated",
            "frames": _frames(11, "add_Tensor"),
        },
        {
            "address": a2 + MIB,
            "size": 2 * MIB,
            "requested_size": 0,
            "state": "inactive",
            "frames": [],
        },
    ]
    blocks_small = [
        {
            "address": a3,
            "size": 512 * 1024,
            "requested_size": 500_000,
            "state": "active_allocated",
            "frames": _frames(12, "relu"),
        },
        {
            "address": a3 + 512 * 1024,
            "size": 1536 * 1024,
            "requested_size": 0,
            "state": "inactive",
            "frames": [],
        },
    ]
    segments = [
        {
            "device": 0,
            "address": base,
            "total_size": 8 * MIB,
            "allocated_size": 6 * MIB,
            "active_size": 6 * MIB,
            "requested_size": 6 * MIB,
            "stream": 0,
            "segment_type": "large",
            "segment_pool_id": (0, 0),
            "is_expandable": False,
            "frames": _frames(10, "mm"),
            "blocks": blocks_large,
        },
        {
            "device": 0,
            "address": small,
            "total_size": 2 * MIB,
            "allocated_size": 512 * 1024,
            "active_size": 512 * 1024,
            "requested_size": 500_000,
            "stream": 0,
            "segment_type": "small",
            "segment_pool_id": (0, 0),
            "is_expandable": False,
            "frames": _frames(12, "relu"),
            "blocks": blocks_small,
        },
    ]
    t0 = 1_700_000_000_000_000
    ev: list[dict[str, Any]] = []

    def add(action: str, addr: int, size: int, line: int, op: str) -> None:
        ev.append(
            {
                "action": action,
                "addr": addr,
                "size": size,
                "stream": 0,
                "time_us": t0 + 1000 * len(ev),
                "frames": _frames(line, op),
            }
        )

    add("segment_alloc", base, 8 * MIB, 10, "mm")
    add("alloc", a1, 5 * MIB, 10, "mm")
    add("alloc", a2, 2 * MIB, 13, "cat")  # temporary, freed below
    add("free_requested", a2, 2 * MIB, 14, "cat")
    add("free_completed", a2, 2 * MIB, 14, "cat")
    add("alloc", a2, 1 * MIB, 11, "add_Tensor")
    add("segment_alloc", small, 2 * MIB, 12, "relu")
    add("alloc", a3, 512 * 1024, 12, "relu")
    add("alloc", a3 + 512 * 1024, 1024 * 1024, 15, "gelu")
    add("free_requested", a3 + 512 * 1024, 1024 * 1024, 16, "gelu")
    add("free_completed", a3 + 512 * 1024, 1024 * 1024, 16, "gelu")
    add("oom", 0, 64 * MIB, 17, "matmul")
    return {
        "segments": segments,
        "device_traces": [ev],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1},
        "external_annotations": [],
    }


def old_layout() -> dict[str, Any]:
    base = 0x7E0000000000
    segments = []
    for i in range(3):
        addr = base + i * 64 * MIB
        segments.append(
            {
                "device": 1,
                "address": addr,
                "total_size": 20 * MIB,
                "allocated_size": 4 * MIB,
                "active_size": 4 * MIB,
                "requested_size": 4 * MIB,
                "stream": 0,
                "segment_type": "large",
                "segment_pool_id": (0, 0),
                "is_expandable": False,
                "frames": [],
                "blocks": [
                    {
                        "address": addr,
                        "size": 4 * MIB,
                        "requested_size": 4 * MIB,
                        "state": "active_allocated",
                        "frames": [],
                    },
                    {
                        "address": addr + 4 * MIB,
                        "size": 16 * MIB,
                        "requested_size": 0,
                        "state": "inactive",
                        "frames": [],
                    },
                ],
            }
        )
    return {"segments": segments, "device_traces": [[], []]}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cuda_snapshot_new.pickle").write_bytes(pickle.dumps(new_layout(), protocol=4))
    raw = pickle.dumps(old_layout(), protocol=4)
    (OUT / "cuda_snapshot_old.pickle.gz").write_bytes(gzip.compress(raw, mtime=0))
    print(f"wrote {OUT}/cuda_snapshot_new.pickle and cuda_snapshot_old.pickle.gz")


if __name__ == "__main__":
    main()
