"""Overlap, idle split, launch delays and modules, against numbers recomputed from the JSON."""

from __future__ import annotations

import gzip
import json
import re
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np
import pytest

from perfview.core.analysis.torch import modules, streams
from perfview.loaders import load
from tests.conftest import DATA, sample
from tests.core.analysis.torch._raw import NCCL, RANK0, ns, timeline

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def _window(rel: str) -> tuple[int, int]:
    steps = [e for e in _exact(rel) if str(e["name"]).startswith("ProfilerStep#")
             and e.get("cat") == "user_annotation"]  # fmt: skip
    return min(_dns(e["ts"]) for e in steps), max(_dns(e["ts"]) + _dns(e["dur"]) for e in steps)


def _union(spans: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _span(e: dict[str, Any]) -> tuple[int, int]:
    return _dns(e["ts"]), _dns(e["ts"]) + _dns(e["dur"])


def test_overlap_matches_the_json() -> None:
    lo, hi = _window(RANK0)
    kernels = [e for e in _exact(RANK0) if e.get("cat") == "kernel"]
    is_comm = [bool(re.search(r"(?i)\bnccl", e["name"])) for e in kernels]
    compute = _union([_span(e) for e, c in zip(kernels, is_comm, strict=True) if not c], lo, hi)
    table = streams.overlap_table(timeline(RANK0))
    for tid in sorted({e["tid"] for e, c in zip(kernels, is_comm, strict=True) if c}):
        comm = _union([_span(e) for e, c in zip(kernels, is_comm, strict=True)
                       if c and e["tid"] == tid], lo, hi)  # fmt: skip
        both = sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in comm for s2, e2 in compute)
        row = table[table["stream"] == f"stream {tid}"].iloc[0]
        assert row["comm_ns"] == sum(e - s for s, e in comm)
        assert row["compute_ns"] == sum(e - s for s, e in compute)
        assert row["overlapped_ns"] == both
        assert row["overlap_pct"] == pytest.approx(both * 100 / row["comm_ns"])
    assert set(table["rank"]) == {0}


def test_idle_split_matches_the_json() -> None:
    lo, hi = _window(NCCL)
    raw = _exact(NCCL)
    launch = {e["args"]["correlation"]: _dns(e["ts"]) for e in raw
              if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}  # fmt: skip
    table = streams.idle_table(timeline(NCCL))
    for tid in (7, 40):
        acts = sorted((e for e in raw if e.get("cat") in GPU_CATS and e["tid"] == tid),
                      key=lambda e: _dns(e["ts"]))  # fmt: skip
        host = kernel = other = 0
        reach = lo
        for e in [*acts, None]:
            start = hi if e is None else min(max(_dns(e["ts"]), lo), hi)
            gap_s, gap_e = min(reach, hi), start
            if gap_e > gap_s:
                at = None if e is None else launch.get(e["args"].get("correlation"))
                if at is None:
                    other += gap_e - gap_s
                else:
                    h = max(0, min(at, gap_e) - gap_s)
                    host, kernel = host + h, kernel + (gap_e - gap_s - h)
            if e is not None:
                reach = max(reach, _dns(e["ts"]) + _dns(e["dur"]))
        row = table[table["stream"] == f"stream {tid}"].iloc[0]
        got = (row["host_wait_ns"], row["kernel_wait_ns"], row["other_ns"])
        assert got == (host, kernel, other)
        assert row["idle_ns"] + row["busy_ns"] == row["window_ns"] == hi - lo


def _exact(rel: str) -> list[dict[str, Any]]:
    """X events with ts/dur parsed as Decimal: floats lose the ns digits of big µs stamps."""
    with gzip.open(sample(rel), "rt") as fh:
        doc = json.load(fh, parse_float=Decimal)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def _dns(us: Any) -> int:
    return int((Decimal(us) * 1000).to_integral_value(rounding=ROUND_HALF_EVEN))


def test_launch_delays_match_the_json() -> None:
    raw = _exact(RANK0)
    launch = {e["args"]["correlation"]: _dns(e["ts"]) for e in raw
              if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}  # fmt: skip
    table = streams.launch_delay_table(timeline(RANK0))
    for tid in (7, 84):
        delays = [_dns(e["ts"]) - launch[e["args"]["correlation"]] for e in raw
                  if e.get("cat") in GPU_CATS and e["tid"] == tid
                  and e["args"].get("correlation") in launch]  # fmt: skip
        row = table[table["stream"] == f"stream {tid}"].iloc[0]
        assert row["launches"] == len(delays)
        assert row["median_ns"] == round(float(np.median(delays)))
        assert row["max_ns"] == max(delays)
        q1, med, q3 = np.percentile(delays, [25, 50, 75])
        limit = max(q3 + streams.OUTLIER_IQR * (q3 - q1), 2 * med)
        assert row["outliers"] == sum(d > limit for d in delays)


def test_launch_delay_histogram_buckets_the_json_s_delays_at_1_2_5_steps() -> None:
    raw = _exact(RANK0)
    launch = {e["args"]["correlation"]: _dns(e["ts"]) for e in raw
              if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}  # fmt: skip
    delays = [_dns(e["ts"]) - launch[e["args"]["correlation"]] for e in raw
              if e.get("cat") in GPU_CATS and e["args"].get("correlation") in launch]  # fmt: skip
    hist = streams.delay_histogram(streams.launch_delays(timeline(RANK0)))
    assert int(hist["launches"].sum()) == len(delays)
    edges = [*hist["lo_ns"], int(hist["hi_ns"].to_numpy()[-1])]
    for edge in edges:  # every edge 1, 2 or 5 × a power of ten of ns
        assert int(str(edge).rstrip("0") or "0") in (1, 2, 5)
    assert edges[0] <= max(min(delays), 1)
    assert edges[-1] > max(delays)
    for lo, hi, n in zip(hist["lo_ns"], hist["hi_ns"], hist["launches"], strict=True):
        assert n == sum(lo <= d < hi or (lo == edges[0] and d < lo) for d in delays)
    table = streams.launch_delay_table(timeline(RANK0))
    assert int(hist["outliers"].sum()) == int(table["outliers"].sum())
    assert streams.delay_histogram(streams.launch_delays(timeline(RANK0)).iloc[:0]).empty


def test_modules_match_the_json() -> None:
    path = DATA / "demos" / "slow-dataloader-slow.pt.trace.json.gz"
    with gzip.open(path, "rt") as fh:
        raw = [e for e in json.load(fh)["traceEvents"] if e.get("ph") == "X"]
    tl = load(path).timeline
    assert tl is not None
    table = modules.modules_table(tl).set_index("module")
    for name in ("Linear_0", "Linear_1", "ReLU_0"):
        slices = [e for e in raw if e["name"] == f"nn.Module: {name}"]
        assert table.loc[f"Sequential_0/{name}", "calls"] == len(slices)
        assert table.loc[f"Sequential_0/{name}", "forward_ns"] == sum(ns(e["dur"]) for e in slices)
        inside = {e["args"]["Sequence number"] for e in raw if e.get("cat") == "cpu_op"
                  and "Sequence number" in e["args"]
                  and not e["name"].startswith("autograd::engine")
                  and any(ns(m["ts"]) <= ns(e["ts"]) < ns(m["ts"]) + ns(m["dur"])
                          for m in slices)}  # fmt: skip
        backward = sum(ns(e["dur"]) for e in raw
                       if e["name"].startswith(modules.BACKWARD_PREFIX)
                       and e["args"].get("Sequence number") in inside)  # fmt: skip
        assert backward > 0
        assert table.loc[f"Sequential_0/{name}", "backward_ns"] == backward
    top = table.loc["Sequential_0"]
    children = table[table["depth"] == 1]
    assert top["backward_ns"] == children["backward_ns"].sum()  # Sequential has no ops of its own
    assert top["forward_ns"] >= children["forward_ns"].sum()


@pytest.mark.parametrize(
    ("view", "rel"),
    [("overlap", RANK0), ("idle", NCCL), ("launch-delays", RANK0)],
)
def test_cli_views(view: str, rel: str, capsys: pytest.CaptureFixture[str]) -> None:
    from perfview import cli

    assert cli.main(["summary", str(sample(rel)), "--view", view, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["view"] == view
    assert doc["rows"]


def test_cli_modules_view(capsys: pytest.CaptureFixture[str]) -> None:
    from perfview import cli

    path = DATA / "demos" / "slow-dataloader-slow.pt.trace.json.gz"
    assert cli.main(["summary", str(path), "--view", "modules", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["module"] for r in rows][:2] == ["CrossEntropyLoss_0", "Sequential_0"]
    assert cli.main(["summary", str(path), "--view", "overlap"]) == 0  # no NCCL: empty table
