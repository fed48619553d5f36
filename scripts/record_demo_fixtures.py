"""Record the tiny torch.profiler fixtures of the bundled demos into tests/data/demos/.

    python scripts/record_demo_fixtures.py

Each demo (perfview/runner/examples.py) is recorded slow and fixed with the same options
`perfview examples run` uses; the pairwise demo runs on 20 x 25 points (500 pairs) so its
trace stays near 150 KB. Needs torch in this interpreter. CPU only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfview.runner.examples import DEMOS, record_argv  # noqa: E402

OUT = ROOT / "tests" / "data" / "demos"
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}  # one intra-op thread: steadier on a busy box
SMALLER = {"pairwise-loop": ["--points", "20", "25"]}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for demo in DEMOS.values():
        for fixed in (False, True):
            out = OUT / f"{demo.name}-{'fixed' if fixed else 'slow'}.pt.trace.json.gz"
            argv = record_argv(demo, str(out), fixed) + SMALLER.get(demo.name, [])
            cmd = [sys.executable, "-m", "perfview", "record", *argv]
            subprocess.run(cmd, check=True, cwd=ROOT, env=ENV)
            print(f"{out.relative_to(ROOT)}: {out.stat().st_size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
