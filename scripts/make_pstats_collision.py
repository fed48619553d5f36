"""Write tests/data/module_eval_collision.prof: cProfile of `python -m pkg` whose code calls eval.

    python3 scripts/make_pstats_collision.py [--out tests/data]

`python -m cProfile -o OUT -m pkg` runs `run_module(...)` through `exec` of a string, so its
outer frame is `<string>:1(<module>)`; the package then calls `eval("…")`, another
`<string>:1(<module>)`. pstats keys functions by (file, line, name), so the two code objects
collide: the file keeps one entry's numbers (the eval's, a few µs) while the edge to
`runpy.run_module` (the whole run) hangs off it. perfview must say so and still place the time.
"""

from __future__ import annotations

import argparse
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "module_eval_collision.prof"

MAIN = """
def work(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def main():
    value = 0
    keep = []  # code objects held, so each eval is its own profiler entry
    for i in range(5):
        keep.append(compile(f"{i} * 3", "<string>", "eval"))
        value += eval(keep[-1])
    for _ in range(20):
        value += work(20_000)
    return value


main()
"""


def collides(path: Path) -> bool:
    """True when the kept `<string>:1(<module>)` entry is an eval's, not the outer run's."""
    stats = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    key = ("<string>", 1, "<module>")
    own = stats[key][3]
    out = max((v[4][key][3] for v in stats.values() if key in v[4]), default=0.0)
    return bool(out > 100 * own)


def make(out: Path, tries: int = 20) -> Path:
    """Run the package under cProfile until the keys collide the telling way; return the path.

    pstats keeps the colliding entry whose code object has the highest address. With pymalloc
    the outer string's code sits in an early arena above everything allocated later, so the
    run uses PYTHONMALLOC=malloc (a heap that grows upwards): the evals' code then wins.
    """
    target = out / NAME
    for _ in range(tries):
        with tempfile.TemporaryDirectory() as tmp:
            pkg = Path(tmp) / "evalpkg"
            pkg.mkdir()
            (pkg / "__init__.py").write_text("")
            (pkg / "__main__.py").write_text(MAIN)
            cmd = [sys.executable, "-m", "cProfile", "-o", str(target.resolve()), "-m", "evalpkg"]
            env = {**os.environ, "PYTHONMALLOC": "malloc"}
            subprocess.run(cmd, cwd=tmp, env=env, check=True, capture_output=True)
        if collides(target):
            return target
    raise SystemExit("the outer <string> entry won every time; run again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data")
    args = parser.parse_args()
    print(make(args.out))


if __name__ == "__main__":
    main()
