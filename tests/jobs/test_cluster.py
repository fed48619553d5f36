"""`perfview summary JOB --cluster ADDRESS` on a real Dask LocalCluster: same tables as locally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.core.pages import summary
from tests.jobs.test_job import needs_ranks

distributed = pytest.importorskip("distributed", reason="the 'cluster' extra (dask) is absent")
pytest.importorskip("pyarrow", reason="the 'cluster' extra (pyarrow) is absent")


@pytest.fixture(scope="module")
def scheduler() -> Any:
    """Two worker processes on 127.0.0.1, no dashboard; closed when the module's tests end."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    code = cli.main(["summary", *argv, "--format", "json", "--top", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_cluster_equals_local(
    capsys: pytest.CaptureFixture[str], scheduler: str, tmp_path: Path
) -> None:
    for i, folder in enumerate(needs_ranks()):
        out = tmp_path / f"job{i}"
        for view in summary.views_for("job"):
            local = _json(capsys, [str(folder), "--view", view, "--workers", "1"])
            remote = _json(
                capsys, [str(folder), "--view", view, "--cluster", scheduler, "--output", str(out)]
            )
            assert remote == local, view
        manifest = json.loads((out / "manifest.json").read_text())
        assert [r["rank"] for r in manifest["ranks"]] == [0, 1]
        for entry in manifest["ranks"]:
            assert (out / entry["events"]).stat().st_size > 0
        assert not list(folder.glob("*.parquet")), "nothing is written beside the inputs"


def test_duckdb_query_across_ranks(scheduler: str, tmp_path: Path) -> None:
    pytest.importorskip("duckdb", reason="duckdb is absent")
    from perfview.jobs import cluster

    folder = needs_ranks()[0]
    job = cluster.open_job_on_cluster([folder], scheduler, tmp_path)
    counts = cluster.query(
        tmp_path, "SELECT rank, count(*) AS n FROM collectives GROUP BY rank ORDER BY rank"
    )
    assert counts["n"].tolist() == [len(r.comms) for r in job.ranks]


def test_output_beside_the_inputs_is_refused(
    capsys: pytest.CaptureFixture[str], scheduler: str
) -> None:
    folder = needs_ranks()[0]
    code = cli.main(["summary", str(folder), "--cluster", scheduler, "--output", str(folder)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "input folder" in err
