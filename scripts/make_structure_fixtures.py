"""Record the two torch traces of the structural diff test (tests/data/diff/structure/).

A tiny two-layer model runs two forward passes under `perfview record --mode torch
--record-shapes`, each pass inside `record_function("forward")`. The candidate (`b`) inserts
one op in the forward pass, `torch.tanh` after the ReLU; everything else is the same program.
`perfview diff a b --view structure` must report `aten::tanh` as inserted in each forward
pass, and the first one as the first divergence. Traces are gzipped (the loader reads
.json.gz). Usage:

    python3 scripts/make_structure_fixtures.py [--out tests/data/diff/structure]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MODEL = '''\
"""perfview structure fixture: python model.py a|b (b inserts torch.tanh in forward)."""
import sys

import torch

torch.manual_seed(0)
EXTRA = sys.argv[1] == "b"


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if EXTRA:
            h = torch.tanh(h)
        return self.fc2(h).softmax(dim=-1)


net = Net()
x = torch.randn(8, 16)
with torch.no_grad():
    for _ in range(2):
        with torch.profiler.record_function("forward"):
            net(x)
'''


def record(out: Path) -> list[Path]:
    """Record variants a and b into `out` as gzipped Chrome traces; return the files."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="perfview-structure-") as tmp:
        script = Path(tmp) / "model.py"
        script.write_text(MODEL)
        for variant in ("a", "b"):
            raw = Path(tmp) / f"{variant}.json"
            argv = [sys.executable, "-m", "perfview", "record", "--mode", "torch",
                    "--record-shapes", "-o", str(raw), str(script), variant]  # fmt: skip
            subprocess.run(argv, cwd=ROOT, check=True)
            target = out / f"{variant}.pt.trace.json.gz"
            with open(raw, "rb") as src, gzip.GzipFile(target, "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "diff" / "structure")
    args = parser.parse_args(argv)
    for path in record(args.out):
        print(f"{path.name}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
