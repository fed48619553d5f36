"""Record tiny memray captures with several memray releases into tests/data/memray.

    python scripts/make_memray_fixtures.py [--venvs /work/big/m17]

For each release a virtual environment under --venvs gets `pip install memray==X` (once), then
`memray run` records PROGRAM (a leak, a temporary, a thread, an mmap, realloc growth) and
`memray stats --json` of that same release prints the peak and total figures the tests check
(tests/loaders/test_memray_stream.py). Captures:

    v12_default.bin     memray 1.19.3, header version 12, LZ4 (the default)
    v13_default.bin     memray 1.20.0, header version 13, LZ4
    v13_native.bin      memray 1.20.0, --native (native frames; perfview's reader keeps Python's)
    v13_raw_pyalloc.bin memray 1.20.0, --no-compress --trace-python-allocators
    v12_aggregated.bin  memray 1.19.3, --aggregate (pre-aggregated: memray's reader only)
    v11_default.bin     memray 1.18.0, header version 11, LZ4
    v11_raw_pyalloc.bin memray 1.18.0, --no-compress --trace-python-allocators
    v10_default.bin     memray 1.10.0, header version 10, LZ4
    v9_default.bin      memray 1.6.0, header version 9, LZ4

Each must stay under 200 KB (checked). A new recording differs by a few bytes (interpreter
start-up), so after re-recording one, copy the printed figures into FIGURES in
tests/loaders/test_memray_stream.py; `--only NAME` re-records just that capture.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "memray"
MAX_BYTES = 200 * 1024
PROGRAM = """\
import builtins
import mmap
import threading

MIB = 1 << 20


def leak():
    builtins._kept = bytearray(3 * MIB)  # never freed while tracked


def temporary():
    tmp = bytearray(5 * MIB)
    del tmp


def grow():
    buf = bytearray()
    for _ in range(64):
        buf += b"x" * 4096  # realloc growth
    return len(buf)


def worker():
    data = [bytearray(64 * 1024) for _ in range(8)]
    return sum(map(len, data))


def mapped():
    m = mmap.mmap(-1, 2 * MIB)
    m[:4] = b"abcd"
    m.close()


leak()
temporary()
grow()
t = threading.Thread(target=worker, name="fixture-worker")
t.start()
t.join()
mapped()
"""
CAPTURES = {
    "v12_default.bin": ("1.19.3", []),
    "v13_default.bin": ("1.20.0", []),
    "v13_native.bin": ("1.20.0", ["--native"]),
    "v13_raw_pyalloc.bin": ("1.20.0", ["--no-compress", "--trace-python-allocators"]),
    "v12_aggregated.bin": ("1.19.3", ["--aggregate"]),
    "v11_default.bin": ("1.18.0", []),
    "v11_raw_pyalloc.bin": ("1.18.0", ["--no-compress", "--trace-python-allocators"]),
    "v10_default.bin": ("1.10.0", []),
    "v9_default.bin": ("1.6.0", []),
}


def venv(root: Path, release: str) -> Path:
    """A Python with memray==release (created once under root)."""
    folder = root / f"memray-{release}"
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"memray=={release}"], check=True
        )
    return python


def record(python: Path, flags: list[str], out: Path, work: Path) -> dict[str, int]:
    script = work / "fixture_program.py"
    script.write_text(PROGRAM)
    out.unlink(missing_ok=True)
    cmd = [str(python), "-m", "memray", "run", "-q", *flags, "-o", str(out), str(script)]
    subprocess.run(cmd, check=True, cwd=work, timeout=300)
    stats = work / "stats.json"
    done = subprocess.run(
        [str(python), "-m", "memray", "stats", "--json", "-f", "-o", str(stats), str(out)],
        capture_output=True,
        timeout=300,
    )
    if done.returncode == 0:
        meta = json.loads(stats.read_text())["metadata"]
        return {"peak_memory": meta["peak_memory"], "total_allocations": meta["total_allocations"]}
    # `memray stats` refuses pre-aggregated captures: the same figures from its FileReader
    probe = "import memray,sys; m=memray.FileReader(sys.argv[1]).metadata; print(m.peak_memory)"
    peak = subprocess.run([str(python), "-c", probe, str(out)], capture_output=True, check=True)
    return {"peak_memory": int(peak.stdout), "total_allocations": -1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, default=Path(tempfile.gettempdir()) / "memray-venvs")
    parser.add_argument("--only", choices=sorted(CAPTURES), help="re-record this capture only")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (release, flags) in CAPTURES.items():
            if args.only and name != args.only:
                continue
            figures = record(venv(args.venvs, release), flags, OUT / name, Path(tmp))
            size = (OUT / name).stat().st_size
            print(f"{name}: memray {release} {' '.join(flags)}: {figures}, {size:,} bytes")
            if size > MAX_BYTES:
                raise SystemExit(f"{name} is {size:,} bytes, over {MAX_BYTES:,}")


if __name__ == "__main__":
    main()
