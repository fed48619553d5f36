"""`trace.kernels` (build's compiled one-pass steps) give exactly what build's numpy steps
give: on random columns with every edge (negative and absent durations, untimed and metadata
events, no timed event at all) and as whole builds of real samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from perfview.loaders.trace import build as build_mod
from perfview.loaders.trace import kernels, lanes
from perfview.loaders.trace.columns import Columns
from perfview.loaders.trace.read import read_bytes
from perfview.loaders.trace.scan import parallel as trace_parallel
from perfview.loaders.trace.slices import Phases
from tests.conftest import sample
from tests.loaders.test_chrome_trace import TRACE_SAMPLES

PHASES = ["X", "M", "B", "E", "i", "XB", "C"]


def _columns(rng: np.random.Generator, n: int, timed: bool = True) -> Columns:
    cols = Columns()
    for p in PHASES:
        cols.phs.add(p)
    cols.n = n
    cols.ph.append(rng.integers(0, len(PHASES), n).astype(np.int32))
    cols.ts.append(rng.integers(-(10**12), 10**15, n))
    cols.ts_ok.append(rng.random(n) < (0.9 if timed else 0.0))
    cols.dur.append(rng.integers(-1000, 5000, n))
    cols.dur_ok.append(rng.random(n) < 0.8)
    return cols


@pytest.mark.parametrize(("seed", "timed"), [(0, True), (1, True), (2, False), (3, True)])
def test_times_equals_numpy(seed: int, timed: bool) -> None:
    rng = np.random.default_rng(seed)
    cols = _columns(rng, 20_000 if seed < 3 else 3, timed)
    ph = Phases(cols)
    ok = cols.cat_all("ts_ok")
    want_w: list[str] = []
    got_w: list[str] = []
    want = build_mod._times(cols, ph, ok, want_w, None)
    got = build_mod._times(cols, ph, ok, got_w, kernels)
    for a, b in zip(want[:2], got[:2], strict=True):
        assert a.dtype == b.dtype
        assert np.array_equal(a, b)
    assert want[2:] == got[2:]
    assert want_w == got_w
    assert bool(want_w) == (timed and seed < 3)  # random negative X durations are reported


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_among_equals_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 5000
    kept = np.flatnonzero(rng.random(n) < [0.0, 0.3, 1.0][seed])
    rows = rng.integers(0, n, 8000)
    want = build_mod._rank_among(kept, rows, n)
    assert np.array_equal(want, np.searchsorted(kept, rows))
    assert np.array_equal(kernels.rank_among(kept, rows, n), want)


def test_gather_where_equals_numpy() -> None:
    rng = np.random.default_rng(0)
    values = rng.integers(-5, 10**12, 3000)
    keep = rng.random(3000) < 0.5
    src = rng.integers(0, 3000, 5000)
    got = kernels.gather_where(values, src, keep)
    assert got.dtype == np.int64
    assert np.array_equal(got, np.where(keep[src], values[src], -1))


def test_lookup_equals_numpy() -> None:
    rng = np.random.default_rng(0)
    lut = rng.integers(-(2**40), 2**40, 300)
    codes = rng.integers(0, 300, 5000).astype(np.int32)
    got = np.empty(len(codes), dtype=lut.dtype)
    kernels.lookup_into(lut, codes, got)
    assert np.array_equal(got, lut[codes])


def _tables(built: Any) -> list[Any]:
    return [
        built.events, built.lanes, built.instants, built.counters, built.flows, built.memory,
        built.arg_index, built.t0_ns, built.duration_ns, built.counts, built.warnings,
    ]  # fmt: skip


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_build_with_kernels_equals_numpy_build(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole builds of every trace sample, compiled steps on and off."""
    buf, _ = read_bytes(sample(rel))
    scanned = trace_parallel.scan(buf, lambda *_: None, 0.0, 1.0, 2)
    assert scanned is not None
    kernels.warm()
    assert kernels.ready()
    monkeypatch.setattr(lanes, "COMPILED_MIN", 0)  # the tables' compiled steps on any size
    fast = build_mod.build(scanned.cols, compiled=True)
    monkeypatch.setattr(kernels, "ready", lambda: False)
    slow = build_mod.build(scanned.cols, compiled=True)
    for a, b in zip(_tables(fast), _tables(slow), strict=True):
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        elif isinstance(a, np.ndarray):
            assert a.dtype == b.dtype
            assert np.array_equal(a, b)
        else:
            assert a == b


def test_warm_up_compiles_the_signatures_a_load_uses(tmp_path: Path) -> None:
    """A fresh process that warms up and loads a trace on the scanner path uses the machine
    code `warm()` (and so a compile-ahead) compiled, nothing compiled later (one per kernel
    but the gather `lanes.categorical` also runs into int8, int16 and int32 codes)."""
    path = sample("kineto_gpu/hta_nccl_data.json.gz")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from perfview.loaders import LoadOptions, load\n"
        "import json\n"
        "from perfview.loaders.trace import idmerge, kernels, lanes\n"
        "idmerge.warm(); kernels.warm()\n"
        "def counts():\n"
        "    return [len(k.signatures) for k in (*kernels.kernels(), *idmerge.kernels())]\n"
        "warmed = counts()\n"
        "lanes.COMPILED_MIN = 0  # the tables' compiled steps run on this small file too\n"
        "scanned = LoadOptions(read_cache=False, write_cache=False, compiled=True)\n"
        "load(Path(sys.argv[1]), options=scanned)\n"
        "print(json.dumps([warmed, counts()]))\n"
    )
    env = {**os.environ, "PERFVIEW_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
        check=True, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    warmed, used = json.loads(out.stdout.strip().splitlines()[-1])
    assert used == warmed  # nothing compiled during the load
    assert min(warmed) >= 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_codes_equal_joint_codes(seed: int) -> None:
    """First-appearance codes of (pid, tid) id pairs, as `lanes.joint_codes` (pandas'
    factorize) gives them: ids big, negative (string pids) and repeated; too many distinct
    values for the table is refused, not wrong."""
    from perfview.loaders.trace.lanes import joint_codes

    rng = np.random.default_rng(seed)
    pool = np.array([0, 1, -1, -7, 2**40, 12345, 3, 2**61], dtype=np.int64)
    pid = pool[rng.integers(0, len(pool), 50_000)]
    tid = rng.integers(-50, 10**6, 50_000) if seed else pool[rng.integers(0, 3, 50_000)]
    size = 1 << (2 * len(np.unique(np.concatenate([pid, tid]))) + 1).bit_length()
    got, ok = kernels.pair_codes(pid, tid, size)
    assert ok
    assert np.array_equal(got, joint_codes(pid, tid))
    assert not kernels.pair_codes(pid, tid, 8)[1]
    empty = np.zeros(0, dtype=np.int64)
    assert len(kernels.pair_codes(empty, empty, 16)[0]) == 0
