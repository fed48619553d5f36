"""Ranks of a folder of per-rank traces: rank from distributedInfo, else the file name; the
folder opens as a job (`perfview.jobs`) and its `ranks` view is read through the page registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from perfview.core.analysis.torch import ranks
from perfview.core.analysis.torch.job import document
from perfview.core.pages import summary
from perfview.jobs import open_job
from perfview.loaders import load
from tests.conftest import sample
from tests.core.analysis.torch._raw import RANK0, RANK1, ROCM, events, ns


def _mean_step(rel: str) -> float:
    durs = [
        ns(e["dur"])
        for e in events(rel, "user_annotation")
        if e["name"].startswith("ProfilerStep#")
    ]
    return sum(durs) / len(durs)


def _ranks_view(folder: Path) -> pd.DataFrame:
    """`perfview summary FOLDER --view ranks`'s table."""
    return summary.summarize(document(open_job([folder], workers=1), folder), "ranks")


def test_ranks_from_distributed_info_under_neutral_names(tmp_path: Path) -> None:
    # Names that say nothing (and in the wrong order): the rank must come from the metadata.
    shutil.copy(sample(RANK1), tmp_path / "a.json.gz")
    shutil.copy(sample(RANK0), tmp_path / "b.pt.trace.json.gz")
    (tmp_path / "notes.txt").write_text("not a trace")
    table = _ranks_view(tmp_path)
    assert table["rank"].tolist() == [0, 1]
    assert table["file"].tolist() == ["b.pt.trace.json.gz", "a.json.gz"]
    assert table["rank_source"].tolist() == ["distributedInfo"] * 2
    assert table["steps"].tolist() == [2, 2]
    assert table["step_mean_ns"].tolist() == pytest.approx([_mean_step(RANK0), _mean_step(RANK1)])
    slowest = int(table["step_mean_ns"].to_numpy().argmax())
    assert table["slowest"].tolist() == [i == slowest for i in range(2)]
    assert table["vs_fastest_pct"].min() == 0.0


def test_rank_from_file_name_when_metadata_lacks_it(tmp_path: Path) -> None:
    shutil.copy(sample(ROCM), tmp_path / "trainer.rank-5.json.gz")
    shutil.copy(sample(RANK0), tmp_path / "x.json.gz")
    table = _ranks_view(tmp_path)
    assert table[["rank", "rank_source"]].values.tolist() == [
        [0, "distributedInfo"],
        [5, "file name"],
    ]


@pytest.mark.parametrize(
    ("name", "rank"),
    [
        ("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34),
        ("sampled_rank-1.json.gz", 1),
        ("job_rank_7.json", 7),
        ("worker0.1623143089861.pt.trace.json.gz", 0),
        ("trace_2.pt.trace.json", 2),
        ("host_4242.1623143089861.pt.trace.json", None),  # <host>_<pid>: a pid, not a rank
        ("trace.json", None),
    ],
)
def test_rank_from_name(name: str, rank: int | None) -> None:
    assert ranks.rank_from_name(name) == rank


def test_rank_from_meta() -> None:
    assert ranks.rank_from_meta({"distributedInfo": {"rank": 3, "world_size": 8}}) == 3
    assert ranks.rank_from_meta({"distributedInfo": {"backend": "nccl"}}) is None
    assert ranks.rank_from_meta({}) is None


def test_single_file_ranks_view() -> None:
    table = ranks.single_rank_table(load(sample(RANK1)))
    assert table["rank"].tolist() == [1]
    assert table["slowest"].tolist() == [True]
