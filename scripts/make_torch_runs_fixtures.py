"""Record the torch traces of the several-runs-per-side test (tests/data/diff/torch_runs/).

A small model runs five forward passes under `perfview record --mode torch`. Its ops each
take a few milliseconds: `aten::mm` (x @ w), `aten::addmm` (a Linear layer), `aten::tanh`
and `aten::softmax`. In the candidate (`b`) the input of `aten::mm` has twice the rows (twice the
work: wall-clock op times on a busy machine vary by tens of percent, so the effect is
large); everything else is the same program. Variant `a` is recorded twice as often (runs 6-10
are a second baseline for an A/A test); runs are interleaved (a1, b1, a6, a2, …) so a slow
spell of the machine hits both sides. One thread (`torch.set_num_threads(1)`) keeps op times
steady. Traces are gzipped. Usage:

    python3 scripts/make_torch_runs_fixtures.py [--out tests/data/diff/torch_runs] [--runs 5]
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
"""perfview torch runs fixture: python model.py a|b (b: the input of aten::mm twice as large)."""
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
rows = 2000 if sys.argv[1] == "b" else 1000
x = torch.randn(rows, 512)
w = torch.randn(512, 512)
layer = torch.nn.Linear(512, 512)
z = torch.randn(1000, 512)
with torch.no_grad():
    for _ in range(5):
        torch.mm(x, w)
        h = torch.tanh(layer(z))
        h.softmax(dim=-1)
'''


def record(out: Path, runs: int) -> list[Path]:
    """Record `runs` candidate and 2 x `runs` baseline traces into `out`; return the files."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="perfview-torch-runs-") as tmp:
        script = Path(tmp) / "model.py"
        script.write_text(MODEL)
        for i in range(1, runs + 1):
            for variant, number in (("a", i), ("b", i), ("a", runs + i)):
                raw = Path(tmp) / "trace.json"
                argv = [sys.executable, "-m", "perfview", "record", "--mode", "torch", "-o",
                        str(raw), str(script), variant]  # fmt: skip
                subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
                target = out / f"{variant}_{number}.pt.trace.json.gz"
                with open(raw, "rb") as src, gzip.GzipFile(target, "wb", mtime=0) as dst:
                    shutil.copyfileobj(src, dst)
                raw.unlink()
                written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "diff" / "torch_runs")
    parser.add_argument("--runs", type=int, default=5, help="runs per side (default 5)")
    args = parser.parse_args(argv)
    for path in record(args.out, args.runs):
        print(f"{path.name}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
