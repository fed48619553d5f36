"""The critical path, what-if replays and idle-gap causes on traces built so that the answer
is known (see `_tiny`): exact path, breakdown, predictions; the same numbers through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfview import cli
from perfview.core.analysis.torch.critical_path import idle_gaps, path, what_if
from tests.core.analysis.torch.critical_path._tiny import (
    CPU_BOUND,
    GPU_BOUND,
    LAUNCH_BOUND,
    SYNC_BOUND,
    US,
    Ev,
    loaded,
    write,
)

CASES: dict[str, tuple[list[Ev], str, dict[tuple[str, str], int]]] = {
    "cpu": (CPU_BOUND, "cpu_op", {
        ("cpu_op", "aten::add"): 40, ("cpu_op", "ProfilerStep#1"): 30,
        ("cpu_op", "aten::mm"): 25, ("cpu_op", "cudaLaunchKernel"): 5,
    }),
    "gpu": (GPU_BOUND, "kernel", {
        ("kernel", "k1_gemm"): 40, ("kernel", "k2"): 40, ("cpu_op", "ProfilerStep#1"): 10,
        ("launch", "cudaLaunchKernel"): 7, ("sync", "cudaDeviceSynchronize"): 3,
    }),
    "sync": (SYNC_BOUND, "sync", {
        ("sync", "cudaStreamSynchronize"): 70, ("cpu_op", "ProfilerStep#1"): 15,
        ("kernel", "k1"): 8, ("launch", "cudaLaunchKernel"): 7,
    }),
    "launch": (LAUNCH_BOUND, "launch", {
        ("launch", "cudaLaunchKernel"): 55, ("cpu_op", "aten::relu"): 20,
        ("cpu_op", "ProfilerStep#1"): 15, ("kernel", "k1"): 5, ("sync", "cudaDeviceSynchronize"): 5,
    }),
}  # fmt: skip


def _trace(tmp_path: Path, case: str) -> Path:
    return write(tmp_path / f"{case}.json", CASES[case][0])


@pytest.mark.parametrize("case", sorted(CASES))
def test_path_and_breakdown_are_exact(tmp_path: Path, case: str) -> None:
    tl = loaded(_trace(tmp_path, case))
    _events, bound, expected = CASES[case]
    table = path.critical_path_table(tl)
    got = {(r["category"], r["name"]): int(r["ns"]) for r in table.to_dict("records")}
    assert got == {k: v * US for k, v in expected.items()}
    steps = path.steps_table(tl)
    assert steps.to_dict("records")[0] == {
        "step": 1, "step_ns": 100 * US, "path_ns": 100 * US, "bound_by": bound,
        "bound_pct": pytest.approx(sum(v for (c, _n), v in expected.items() if c == bound)),
    }  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_cli_prints_the_same_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    trace = _trace(tmp_path, case)
    code = cli.main(["summary", str(trace), "--view", "critical-path", "--format", "json",
                     "--top", "0"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert list(rows[0]) == ["step", "category", "name", "ns", "share_pct"]
    assert {(r["category"], r["name"]): r["ns"] for r in rows} == {
        k: v * US for k, v in CASES[case][2].items()
    }
    code = cli.main(["summary", str(trace), "--view", "critical-path-steps", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["rows"][0]["bound_by"] == CASES[case][1]


@pytest.mark.parametrize(
    ("case", "edits", "predicted_us"),
    [
        ("gpu", [], 100),
        ("gpu", ["kernel:k2=0.5"], 80),  # the sync returns 3 µs after k2's new end (72)
        ("gpu", ["kernel:*gemm*=0.5"], 80),  # k2 follows k1 at once: 32 + 40 + 3 + 5
        ("gpu", ["sync:remove"], 30),  # the host leaves the sync at once: 25 + 5
        ("gpu", ["all=0.5"], 50),
        ("cpu", ["cpu:aten::add=0.5"], 80),
        ("cpu", ["kernel:*=0"], 100),  # the kernel is off the path
        ("sync", ["category:sync=0"], 30),
        ("launch", ["launch=0.2"], 56),  # 11 µs launch latency instead of 55
    ],
)
def test_what_if_predictions(
    tmp_path: Path, case: str, edits: list[str], predicted_us: int
) -> None:
    tl = loaded(_trace(tmp_path, case))
    row = what_if.what_if_table(tl, edits).to_dict("records")[0]
    assert row["measured_ns"] == 100 * US
    assert row["predicted_ns"] == predicted_us * US
    assert row["speedup"] == pytest.approx(100 / predicted_us)


def test_the_predicted_timeline_moves_the_edited_kernel(tmp_path: Path) -> None:
    tl = loaded(_trace(tmp_path, "gpu"))
    pred = what_if.predict(tl, what_if.parse_edits(["kernel:k2=0.5"]))
    frame = pred.timeline(tl, 1)
    names = tl.events["name"].astype(str).to_numpy()[frame["row"].to_numpy()]
    k2 = frame[names == "k2"].iloc[0]
    assert (k2["start_ns"], k2["end_ns"]) == (52 * US, 92 * US)
    assert (k2["predicted_start_ns"], k2["predicted_end_ns"]) == (52 * US, 72 * US)
    assert (
        what_if.what_if_path(tl, ["kernel:k2=0.5"]).groupby("category")["ns"].sum()["kernel"]
        == 60 * US
    )


def test_what_if_on_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, "gpu")
    code = cli.main(["summary", str(trace), "--view", "what-if", "--edit", "kernel:*gemm*=0.5",
                     "--edit", "sync:remove", "--format", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["rows"] == [
        {"step": 1, "measured_ns": 100 * US, "predicted_ns": 30 * US,
         "speedup": pytest.approx(100 / 30)},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--view", "what-if", "--edit", "kernel:k=fast"], "is not a number"),
        (["--view", "what-if", "--edit", "warp:k=2"], "cannot read the edit"),
        (["--view", "ops", "--edit", "all=0.5"], "--edit applies to --view what-if only"),
    ],
)
def test_bad_edits_are_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code = cli.main(["summary", str(_trace(tmp_path, "gpu")), *args])
    _out, err = capsys.readouterr()
    assert code != 0
    assert message in err
    assert "Traceback" not in err


def test_idle_gap_causes(tmp_path: Path) -> None:
    tl = loaded(_trace(tmp_path, "gpu"))
    gaps = idle_gaps.idle_gaps(tl)
    got = [
        (r["start_ns"] // US, r["end_ns"] // US, r["cause"], r["detail"])
        for r in gaps.to_dict("records")
    ]
    assert got == [
        (0, 5, "cpu op", "ProfilerStep#1"),  # nothing launched yet: the CPU's time
        (5, 12, "launch latency", "cudaLaunchKernel"),
        (92, 100, "unknown", "(no later work on the stream)"),
    ]
    table = idle_gaps.idle_gaps_table(tl)
    assert table["idle_ns"].sum() == 20 * US
    assert table["share_pct"].sum() == pytest.approx(100)


def test_sync_drain_is_named(tmp_path: Path) -> None:
    # k1 runs, the host waits for it in a sync, then launches k2 after 10 µs of aten::add
    events = [
        ("cudaLaunchKernel", "cuda_runtime", 5, 5, 1, None), ("k1", "kernel", 12, 20, 1, 7),
        ("cudaDeviceSynchronize", "cuda_runtime", 15, 20, None, None),
        ("aten::add", "cpu_op", 36, 10, None, None),
        ("cudaLaunchKernel", "cuda_runtime", 47, 5, 2, None), ("k2", "kernel", 55, 20, 2, 7),
    ]  # fmt: skip
    tl = loaded(write(tmp_path / "drain.json", events))
    gaps = idle_gaps.idle_gaps(tl)
    inside = gaps[(gaps["start_ns"] >= 32 * US) & (gaps["end_ns"] <= 55 * US)]
    rows = inside.to_dict("records")
    assert [(r["start_ns"] // US, r["end_ns"] // US, r["cause"]) for r in rows] == [
        (32, 47, "sync drain"), (47, 55, "launch latency"),
    ]  # fmt: skip


def test_a_finding_off_the_path_says_so_and_ranks_lower(tmp_path: Path) -> None:
    from perfview.core.analysis.torch import recommend
    from perfview.core.analysis.torch.critical_path.path import path_or_enclosing

    tl = loaded(_trace(tmp_path, "cpu"))
    names = tl.events["name"].astype(str).to_numpy()
    on = path_or_enclosing(tl)
    # the CPU-bound step runs through its ops; the kernel runs beside it, off the path
    assert on[names == "aten::add"].all()
    assert on[names == "ProfilerStep#1"].all()
    assert not on[names == "k1"].any()
    off = recommend._off_path(
        tl,
        [
            recommend.Finding(
                "kernel", "low", "e", "m", 1.0, 0.0, rows=(int((names == "k1").argmax()),)
            ),
            recommend.Finding(
                "op", "low", "e", "m", 1.0, 0.0, rows=(int((names == "aten::add").argmax()),)
            ),
            recommend.Finding("no rows", "low", "e", "m", 1.0, 0.0),
        ],
    )
    assert off == [True, False, False]
