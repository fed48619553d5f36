"""A half-truncated rank is marked partial in the job tables and left out of straggler scoring.

Rank 1 of the two-rank NCCL job, its gzip cut in half, loads with fewer steps and
collectives: it used to be counted as a whole rank and flagged slowest, its "truncated"
warning behind "… N more loader warnings".
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from perfview.core.analysis.torch.job_views import ranks_table, stragglers_table
from perfview.jobs.local import open_job
from tests.conftest import sample


def _job(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "job"
    folder.mkdir()
    shutil.copy(sample("ranks/hta_sampled_2of128/rank-0.json.gz"), folder / "rank-0.json.gz")
    whole = sample("ranks/hta_sampled_2of128/rank-1.json.gz").read_bytes()
    (folder / "rank-1.json.gz").write_bytes(whole[: len(whole) // 2])
    return open_job([folder], workers=1)


def test_partial_rank_is_named_and_not_scored(tmp_path: Path) -> None:
    job = _job(tmp_path)
    assert [r.rank for r in job.ranks if r.partial] == [1]
    assert job.warnings[0].startswith("partial ranks")
    assert "rank 1" in job.warnings[0]
    ranks = ranks_table(job).set_index("rank")
    assert bool(ranks.loc[1, "partial"]) is True
    assert bool(ranks.loc[0, "partial"]) is False
    assert not bool(ranks.loc[1, "slowest"])
    late = stragglers_table(job).set_index("rank")
    assert bool(late.loc[1, "partial"]) is True
    assert np.isnan(late.loc[1, "straggler_score"])
    assert late.index[0] == 0  # the scored rank comes first
