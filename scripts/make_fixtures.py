"""Regenerate the tiny fixtures in tests/data from small programs written to a temp folder.

    python3 scripts/make_fixtures.py [--out tests/data]

Writes:
    recursion.prof          cProfile of a program with direct (fib) and mutual (is_even/is_odd)
                            recursion, run with `python -m cProfile`
    mprofile_func.dat       two `mprof run --python` runs appended to one file, each with a
                            @profile function (FUNC lines), plus one `mprof run -M` run whose
                            forked children give CHLD lines
    memprof_report.txt      `python -m memory_profiler` line reports of two @profile functions,
                            from two runs appended with program output in between

If scripts/make_torch_fixture.py exists and torch imports, it is run too. Every output must
stay under 100 KB (checked at the end).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 100 * 1024

CPROFILE_PROGRAM = """
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def work():
    total = 0
    for i in range(200):
        total += sum(j * j for j in range(i))
    return total


def main():
    print(fib(15), is_even(50), work())


main()
"""

MPROF_PROGRAM = """
import time


@profile
def grow():
    blocks = []
    for _ in range(6):
        blocks.append(bytearray(8 * 1024 * 1024))
        time.sleep(0.05)
    inner(blocks)
    return len(blocks)


@profile
def inner(blocks):
    blocks.append(bytearray(16 * 1024 * 1024))
    time.sleep(0.1)


grow()
time.sleep(0.15)
"""

MPROF_CHILDREN_PROGRAM = """
import multiprocessing as mp
import time


def child(n):
    data = bytearray(n * 1024 * 1024)
    time.sleep(0.4)
    return len(data)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=child, args=(8 * (i + 1),)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
"""

MEMPROF_PROGRAM = """
@profile
def build(n):
    data = [0] * n
    more = [i for i in range(n)]

    # a comment and a blank line above
    del more
    return data


@profile
def twice():
    a = build(100000)
    b = build(200000)
    return len(a) + len(b)


if __name__ == "__main__":
    print("result", twice())
"""


def run(cmd: list[str], cwd: Path) -> str:
    """Run a command, failing loudly with its output; return its stdout."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def make_cprofile(tmp: Path, out: Path) -> Path:
    (tmp / "recursion.py").write_text(CPROFILE_PROGRAM)
    target = out / "recursion.prof"
    run([sys.executable, "-m", "cProfile", "-o", str(target), "recursion.py"], tmp)
    return target


def make_mprof(tmp: Path, out: Path) -> Path:
    (tmp / "grow.py").write_text(MPROF_PROGRAM)
    (tmp / "children.py").write_text(MPROF_CHILDREN_PROGRAM)
    target = out / "mprofile_func.dat"
    target.unlink(missing_ok=True)
    mprof = [sys.executable, "-m", "mprof", "run", "-T", "0.05", "-o", str(target)]
    run([*mprof, "--python", "grow.py"], tmp)
    run([*mprof, "--python", "grow.py"], tmp)  # appended: a second run in the same file
    run([*mprof, "-M", sys.executable, "children.py"], tmp)
    return target


def make_memprof(tmp: Path, out: Path) -> Path:
    (tmp / "lines.py").write_text(MEMPROF_PROGRAM)
    target = out / "memprof_report.txt"
    parts = [run([sys.executable, "-m", "memory_profiler", "lines.py"], tmp) for _ in range(2)]
    target.write_text("".join(parts))
    return target


def make_torch(out: Path) -> list[Path]:
    script = ROOT / "scripts" / "make_torch_fixture.py"
    if not script.exists() or importlib.util.find_spec("torch") is None:
        print("torch fixture: skipped (no scripts/make_torch_fixture.py or no torch)")
        return []
    before = {p: p.stat().st_mtime for p in out.iterdir()}
    run([sys.executable, str(script)], ROOT)
    return [p for p in out.iterdir() if p.is_file() and before.get(p) != p.stat().st_mtime]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="perfview-fixtures-"))
    try:
        made = [make_cprofile(tmp, out), make_mprof(tmp, out), make_memprof(tmp, out)]
        made += make_torch(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    too_big = [p for p in made if p.stat().st_size > MAX_BYTES]
    for p in made:
        print(
            f"{p.relative_to(out.parent) if out.parent in p.parents else p}: {p.stat().st_size:,} B"
        )
    if too_big:
        print(f"fixtures over {MAX_BYTES:,} B: {', '.join(map(str, too_big))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
