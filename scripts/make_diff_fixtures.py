"""Record the run pairs that the `perfview diff` tests compare (outputs in tests/data/diff/).

One tiny workload script is run twice per profiler: run A is the baseline, run B makes one
function (`hot`) about three times slower and allocates more memory. The tests then check that
`hot` is the first row of the diff and that the regression gate fires. Everything is written
through the real profilers (cProfile, `mprof run`, `python -m memory_profiler`), so the files
have exactly the shape users produce.

The script is written to a temporary folder under the same name for both runs, so the recorded
paths differ only by machine, never between A and B. Usage:

    python3 scripts/make_diff_fixtures.py [--out tests/data/diff]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# `hot` does `scale` times the baseline work in run B; `steady` is identical in both runs.
# `@profile` is defined as a no-op unless memory_profiler injects its own, so the same source
# serves cProfile, mprof and the line-by-line report.
WORKLOAD = '''\
"""perfview diff fixture workload: run with argument a (baseline) or b (slower, bigger)."""
import sys

try:
    profile  # noqa: B018  (injected by memory_profiler)
except NameError:
    def profile(func):
        return func


def steady(n):
    total = 0
    for i in range(n):
        total += i % 7
    return total


def hot(n):
    total = 0
    for i in range(n):
        total += (i * i) % 11
    return total


@profile
def allocate(mib):
    blocks = []
    for _ in range(mib):
        blocks.append(bytearray(1 << 20))
    kept = sum(len(b) for b in blocks)
    del blocks
    return kept


def main(variant):
    scale = 3 if variant == "b" else 1
    mib = 60 if variant == "b" else 20
    for _ in range(4):
        steady(100_000)
        hot(200_000 * scale)
    allocate(mib)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "a")
'''


def _run(argv: list[str], cwd: Path, stdout: Path | None = None) -> None:
    print("+", " ".join(argv), file=sys.stderr)
    if stdout is None:
        subprocess.run(argv, cwd=cwd, check=True)
        return
    with open(stdout, "wb") as fh:
        subprocess.run(argv, cwd=cwd, check=True, stdout=fh)


def record(out: Path) -> list[Path]:
    """Record cProfile, mprof and memory_profiler pairs into `out`; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="perfview-diff-") as tmp:
        work = Path(tmp)
        script = work / "diffwork.py"
        script.write_text(WORKLOAD)
        py = sys.executable
        for variant in ("a", "b"):
            prof = out / f"run_{variant}.prof"
            _run([py, "-m", "cProfile", "-o", str(prof), str(script), variant], work)
            dat = out / f"run_{variant}.dat"
            dat.unlink(missing_ok=True)  # `mprof run -o` appends to an existing file
            mprof = [py, "-m", "mprof", "run", "--interval", "0.02", "-o", str(dat)]
            _run([*mprof, str(script), variant], work)
            txt = out / f"run_{variant}_lines.txt"
            _run([py, "-m", "memory_profiler", str(script), variant], work, stdout=txt)
            written += [prof, dat, txt]
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "diff")
    args = parser.parse_args(argv)
    for path in record(args.out):
        print(
            f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
            f"{path.stat().st_size:,} bytes"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
