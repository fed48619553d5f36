"""mprof `.dat` files: CMDLINE / MEM / CHLD / FUNC lines written by `mprof run`.

Layout (memory_profiler 0.61, `mprof.read_mprofile_file`):
    CMDLINE <command line>
    MEM <MiB> <unix seconds>
    CHLD <child index> <MiB> <unix seconds>          (with -M)
    FUNC <module.function> <MiB in> <t in> <MiB out> <t out> [<stack level>]

`mprof run -o FILE` appends, so one file can hold several runs, each starting with CMDLINE.
FUNC lines are written by the profiled child, usually before its run's CMDLINE and MEM lines
reach the file, so they are assigned to runs by their timestamps, not by their position.
Timestamps are parsed from their decimal text straight to integer ns (no float rounding).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from perfview.core.model import Bundle, MemoryProfile, schema
from perfview.core.model.errors import EmptyProfile
from perfview.core.model.progress import Progress, noop
from perfview.core.model.units import MIB
from perfview.loaders.base import PLAIN

NAME: Final = "mprof"
DESCRIPTION = "an mprof memory recording (.dat)"
EXTENSIONS = (".dat", ".mprof")
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_TAGS = (b"CMDLINE ", b"MEM ", b"CHLD ", b"FUNC ")


def sniff(head: bytes, path: Path) -> bool:
    """True when the first line is an mprof record (CMDLINE, MEM, CHLD or FUNC)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(_TAGS):
        return False
    first = text.split(b"\n", 1)[0].split()
    if first[0] == b"CMDLINE":
        return True
    try:
        float(first[-1])
    except (ValueError, IndexError):
        return False
    return len(first) >= 3


_MAX_NS = 2**61  # ±73 years around 1970 and back: differences of two stay inside int64
_MAX_MIB = 2.0**40  # 1 EiB; beyond it `* MIB` would leave int64


def refuse(head: bytes, path: Path) -> str | None:
    """Nothing this format's neighbours write needs a special refusal."""
    return None


def _ns(text: str) -> int:
    """Unix seconds as written by mprof ("1652117772.6332") → int ns, exactly.

    Raises ValueError (the line is then skipped as malformed) for text that is not a finite
    time that int64 ns can hold: `inf`, `nan`, `1e400`, 30-digit integers.
    """
    whole, dot, frac = text.partition(".")
    if whole.isdigit() and (frac.isdigit() or not dot) and len(whole) < 12:
        value = int(whole) * 1_000_000_000 + int(frac[:9].ljust(9, "0") or 0)
    else:
        seconds = float(text)
        if not math.isfinite(seconds) or abs(seconds) * 1e9 >= _MAX_NS:
            raise ValueError(f"time out of range: {text[:40]}")
        value = round(seconds * 1e9)
    if abs(value) >= _MAX_NS:
        raise ValueError(f"time out of range: {text[:40]}")
    return value


def _mib(text: str) -> float:
    """A memory value in MiB; ValueError for nan, inf and absurd sizes."""
    value = float(text)
    if not math.isfinite(value) or abs(value) >= _MAX_MIB:
        raise ValueError(f"memory value out of range: {text[:40]}")
    return value


def _small_int(text: str, bits: int) -> int:
    """An int that fits a signed column of `bits` bits (child index, stack level)."""
    value = int(text)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


class _Parsed:
    """Column lists filled by one pass over the lines."""

    def __init__(self) -> None:
        self.mem: tuple[list[int], list[int], list[float]] = ([], [], [])
        self.chld: tuple[list[int], list[int], list[int], list[float]] = ([], [], [], [])
        self.func: list[tuple[str, float, int, float, int, int]] = []
        self.cmdlines: list[str] = [""]
        self.bad = 0
        self.run = 0
        self.run_has_samples = False


def _parse(text: str) -> _Parsed:
    p = _Parsed()
    for line in text.splitlines():
        if not line.strip():
            continue
        tag, _, rest = line.partition(" ")
        # Every field is converted before anything is appended, so a bad field in the middle
        # of a line cannot leave the column lists with different lengths.
        try:
            if tag == "MEM":
                mib, ts = rest.split()[:2]
                mem, ns = _mib(mib), _ns(ts)
                p.mem[2].append(mem)
                p.mem[1].append(ns)
                p.mem[0].append(p.run)
                p.run_has_samples = True
            elif tag == "CHLD":
                child, mib, ts = rest.split()[:3]
                row = (p.run, _small_int(child, 32), _ns(ts), _mib(mib))
                for column, value in zip(p.chld, row, strict=True):
                    column.append(value)  # type: ignore[attr-defined]
                p.run_has_samples = True
            elif tag == "FUNC":
                v = rest.split()
                level = _small_int(v[5], 16) if len(v) >= 6 else -1
                p.func.append((v[0], _mib(v[1]), _ns(v[2]), _mib(v[3]), _ns(v[4]), level))
            elif tag == "CMDLINE":
                if p.run_has_samples:  # a new CMDLINE after samples: an appended run
                    p.run += 1
                    p.cmdlines.append("")
                    p.run_has_samples = False
                p.cmdlines[p.run] = rest.strip()
            else:
                p.bad += 1
        except (ValueError, IndexError):
            p.bad += 1
    return p


def _bytes(mib: list[float]) -> np.ndarray:
    return np.rint(np.asarray(mib, dtype=np.float64) * MIB).astype(np.int64)


def _assign_spans(
    func: list[tuple[str, float, int, float, int, int]], samples: pd.DataFrame
) -> np.ndarray:
    """Run of each FUNC line: the run whose sample time range is nearest to the call start."""
    if not func:
        return np.zeros(0, dtype=np.int32)
    ts = samples.groupby("run")["ts_ns"].agg(["min", "max"])
    lo = ts["min"].to_numpy(dtype=np.float64)
    hi = ts["max"].to_numpy(dtype=np.float64)
    start = np.asarray([f[2] for f in func], dtype=np.float64)[:, None]
    gap = np.maximum(lo[None, :] - start, 0.0) + np.maximum(start - hi[None, :], 0.0)
    runs = np.asarray(ts.index, dtype=np.int32)
    nearest: np.ndarray = runs[np.argmin(gap, axis=1)]
    return nearest


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Read a `.dat` file into a `MemoryProfile` (bytes, unix ns, one `run` per CMDLINE)."""
    path = Path(path)
    progress(0.0, "reading mprof data")
    text = path.read_bytes().decode("utf-8", errors="replace")
    parsed = _parse(text)
    progress(0.7, "building tables")
    if not parsed.mem[0]:
        raise EmptyProfile("the mprof file holds no memory samples (no MEM lines)")
    samples = pd.DataFrame(
        {
            "run": np.asarray(parsed.mem[0], dtype=np.int32),
            "ts_ns": np.asarray(parsed.mem[1], dtype=np.int64),
            "rss_bytes": _bytes(parsed.mem[2]),
        }
    )
    children = pd.DataFrame(
        {
            "run": np.asarray(parsed.chld[0], dtype=np.int32),
            "child": np.asarray(parsed.chld[1], dtype=np.int32),
            "ts_ns": np.asarray(parsed.chld[2], dtype=np.int64),
            "rss_bytes": _bytes(parsed.chld[3]),
        }
    )
    func = parsed.func
    spans = pd.DataFrame(
        {
            "run": _assign_spans(func, samples),
            "name": pd.Series([f[0] for f in func], dtype=object),
            "start_ns": np.asarray([f[2] for f in func], dtype=np.int64),
            "end_ns": np.asarray([f[4] for f in func], dtype=np.int64),
            "mem_start": _bytes([f[1] for f in func]),
            "mem_end": _bytes([f[3] for f in func]),
            "level": np.asarray([f[5] for f in func], dtype=np.int16),
        }
    )
    for df, sch, name in (
        (samples, schema.SAMPLES, "samples"),
        (children, schema.CHILD_SAMPLES, "children"),
        (spans, schema.SPANS, "spans"),
    ):
        schema.validate(df, sch, name)
    # Runs are numbered 0.. over the runs that have samples (a bare CMDLINE is not a run).
    runs = np.unique(np.concatenate([parsed.mem[0], parsed.chld[0]]).astype(np.int32))
    for df in (samples, children, spans):
        df["run"] = np.searchsorted(runs, df["run"].to_numpy()).astype(np.int32)
    cmdlines = [parsed.cmdlines[r] for r in runs]
    extent = pd.concat([samples[["run", "ts_ns"]], children[["run", "ts_ns"]]])
    bounds = extent.groupby("run")["ts_ns"].agg(["min", "max"])
    duration = int((bounds["max"] - bounds["min"]).max())
    warnings = []
    if parsed.bad:
        warnings.append(f"skipped {parsed.bad:,} malformed line(s)")
    progress(1.0, "done")
    return Bundle(
        format=NAME,
        path=path,
        memory=MemoryProfile(samples=samples, children=children, spans=spans, cmdlines=cmdlines),
        counts={
            "samples": len(samples),
            "runs": len(runs),
            "children": len(children),
            "functions": len(spans),
        },
        duration_ns=duration,
        warnings=warnings,
    )
