"""Record a tiny torch.profiler CPU trace into tests/data/torch_cpu_small.pt.trace.json.gz.

Run from the repository root: `python3 scripts/make_torch_fixture.py`. Needs torch (CPU is
enough). The model and shapes are tiny and the schedule records one step, so the gzip stays
far below 100 KB while still holding what the loader must understand: ProfilerStep#N
annotations, cpu_op slices with Input Dims, [memory] instants (profile_memory), fwdbwd flows
and the PyTorch Profiler span.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "torch_cpu_small.pt.trace.json.gz"
LIMIT = 100 * 1024


def record(out: Path) -> dict[str, int]:
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(4, 8)
    y = torch.randn(4, 2)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "trace.json"

        def on_ready(prof: profile) -> None:
            prof.export_chrome_trace(str(raw))

        with profile(
            activities=[ProfilerActivity.CPU],
            schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
            on_trace_ready=on_ready,
            record_shapes=True,
            profile_memory=True,
        ) as prof:
            for _ in range(2):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                prof.step()
        with open(raw, "rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
    data = json.loads(gzip.decompress(out.read_bytes()))
    counts: dict[str, int] = {}
    for event in data["traceEvents"]:
        counts[event.get("ph", "?")] = counts.get(event.get("ph", "?"), 0) + 1
    return counts


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    counts = record(OUT)
    size = OUT.stat().st_size
    print(f"wrote {OUT} ({size:,} bytes); phases {counts}")
    if size > LIMIT:
        print(f"the fixture is larger than {LIMIT:,} bytes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
