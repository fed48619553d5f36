"""What-if on a job, on a two-rank job built so that the answer is known exactly.

Both ranks: ProfilerStep#1 over [0, 100] µs, a gemm from 12 µs on stream 7, then an all-reduce,
then an 8 µs kernel, the host waiting in cudaDeviceSynchronize until 92 µs. Rank 0's gemm takes
20 µs, rank 1's 60 µs: rank 0 reaches the all-reduce at 32 µs and waits there until rank 1
arrives at 72 µs; the collective then transfers for 10 µs (both end at 82 µs). So each rank's
step is 32 (rank 0) or 72 (rank 1) µs of its own before the collective, 10 µs of transfer and
18 µs after it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfview import cli
from perfview.core.analysis.torch import job_views
from perfview.core.analysis.torch.critical_path.job_what_if import COLUMNS
from perfview.core.model.errors import LoadError
from perfview.jobs import open_job
from tests.core.analysis.torch.critical_path._tiny import (
    US,
    Ev,
    kernel,
    launch,
    op,
    sync,
    write,
)

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"


def _rank(gemm_us: int) -> list[Ev]:
    arrive = 12 + gemm_us
    return [
        launch(5, 3, 1), kernel("ampere_sgemm", 12, gemm_us, 1),
        launch(9, 3, 2), kernel(ALLREDUCE, arrive, 82 - arrive, 2),
        launch(13, 3, 3), kernel("relu", 82, 8, 3),
        sync("cudaDeviceSynchronize", 20, 72),
    ]  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for rank, gemm in ((0, 20), (1, 60)):
        meta = {"distributedInfo": {"rank": rank, "world_size": 2, "backend": "nccl"}}
        write(tmp_path / f"rank-{rank}.json", _rank(gemm), meta=meta)
    return tmp_path


def _table(folder: Path, *edits: str) -> list[dict[str, object]]:
    job = open_job([folder], workers=1)
    table = job_views.what_if_table(job, edits)
    assert list(table.columns) == COLUMNS
    return [{str(k): v for k, v in r.items()} for r in table.to_dict("records")]


def _row(measured: int, predicted: int, rank: int) -> dict[str, object]:
    return {
        "step": 1, "measured_ns": measured * US, "predicted_ns": predicted * US,
        "speedup": pytest.approx(measured / predicted), "rank": rank,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("edits", "predicted", "rank"),
    [
        ((), 100, 1),  # nothing edited: the measured step, bounded by the slow rank
        (("rank:1=median",), 80, 1),  # median of 32 and 72 µs: 52 + 10 + 18
        (("rank:1=0.5",), 64, 1),  # 36 µs, still after rank 0's 32: 36 + 10 + 18
        (("rank:1=0.25",), 60, 0),  # 18 µs: rank 0 arrives last now: 32 + 10 + 18
        (("rank:0=0.5",), 100, 1),  # the fast rank faster: nothing changes
        # per-trace edits on every rank: the gemms take 10 and 30 µs, rank 1 arrives at 42
        (("kernel:*gemm*=0.5",), 70, 1),
        (("kernel:*gemm*=0.5", "rank:1=median"), 60, 1),  # median of 22 and 42 µs: 32 + 28
        (("comm=0.5",), 95, 1),  # the transfer halves (the wait is the arrivals')
    ],
)
def test_predictions_are_exact(
    folder: Path, edits: tuple[str, ...], predicted: int, rank: int
) -> None:
    assert _table(folder, *edits) == [_row(100, predicted, rank)]


def test_the_cli_prints_the_same_numbers(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["summary", str(folder), "--view", "what-if", "--edit", "rank:1=median",
                     "--format", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["rows"] == [_row(100, 80, 1)]
    code = cli.main(["summary", str(folder), "--view", "what-if", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["rows"] == [_row(100, 100, 1)]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("rank:7=median", "rank:7 is not a rank of this step (ranks: 0, 1)"),
        ("rank:1=fast", "cannot read the edit"),
        ("rank=2", "cannot read the edit"),
        ("kernel:k=fast", "is not a number"),
    ],
)
def test_bad_job_edits_are_one_sentence(
    folder: Path, capsys: pytest.CaptureFixture[str], edit: str, message: str
) -> None:
    code = cli.main(["summary", str(folder), "--view", "what-if", "--edit", edit])
    _, err = capsys.readouterr()
    assert code != 0
    assert message in err
    assert "Traceback" not in err
    with pytest.raises(LoadError, match=r"edit|factor|rank"):
        _table(folder, edit)


def test_a_job_whose_ranks_cannot_be_read_again_takes_rank_edits_only(folder: Path) -> None:
    job = open_job([folder], workers=1)
    job.reopen = None
    assert list(job_views.what_if_table(job, ["rank:1=0.5"])["predicted_ns"]) == [64 * US]
    with pytest.raises(LoadError, match="only rank:N edits apply"):
        job_views.what_if_table(job, ["comm=0.5"])


def _cpu_ahead(gemm_us: int) -> list[Ev]:
    """The job above, plus a second all-reduce that the host launches late (at 150 µs, after a
    CPU op): both ranks reach it at 155 µs whatever the first one did; it transfers for 10 µs,
    the host's sync returns at 167 µs and the step ends at 200 µs."""
    arrive = 12 + gemm_us
    return [
        launch(5, 3, 1), kernel("ampere_sgemm", 12, gemm_us, 1),
        launch(9, 3, 2), kernel(ALLREDUCE, arrive, 82 - arrive, 2),
        op("aten::cpu_work", 20, 130), launch(150, 3, 3), kernel(ALLREDUCE, 155, 10, 3),
        sync("cudaDeviceSynchronize", 153, 14),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("edits", "predicted"),
    [
        ((), 200),
        (("rank:1=median",), 200),  # the first collective ends earlier; the second does not move
        (("comm=0.5",), 195),  # the second transfer halves; the first's end moves nothing
        (("kernel:*gemm*=0.5",), 200),
    ],
)
def test_a_collective_reached_late_on_its_own_does_not_move(
    tmp_path: Path, edits: tuple[str, ...], predicted: int
) -> None:
    for rank, gemm in ((0, 20), (1, 60)):
        meta = {"distributedInfo": {"rank": rank, "world_size": 2, "backend": "nccl"}}
        write(tmp_path / f"rank-{rank}.json", _cpu_ahead(gemm), step_us=200, meta=meta)
    (row,) = _table(tmp_path, *edits)
    assert (row["measured_ns"], row["predicted_ns"]) == (200 * US, predicted * US)
