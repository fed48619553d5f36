"""The same per-rank parse-and-reduce, on a Dask distributed cluster (`--cluster ADDRESS`).

Each task runs on a worker that can read the trace file at its path (shared storage or the
worker's own disk: the file is never sent over the network) or its URL (`s3://…`: the worker
fetches it into its own cache, `perfview.store.remote`, with its own credentials). The worker
parses the rank, writes the rank's columns as Parquet (events, collectives, steps) in the
output folder and returns only the `RankReduction`, so what travels back is a few kilobytes
per rank. The client then writes `manifest.json` beside the Parquet files: one entry per rank
with its files, clock origin and offset, which `query` (DuckDB) reads to ask SQL questions
across every rank.

The output folder defaults to `<perfview cache>/jobs/<hash of the file list>`, never the input
folder. Needs the `cluster` extra: dask[distributed] and pyarrow (duckdb for `query`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from perfview.core.analysis.torch.job import Job, RankFailure, RankReduction, assemble
from perfview.core.model import Timeline
from perfview.core.model.errors import LoadError
from perfview.jobs.local import WORKER_COMPILED, job_sources, parse_and_reduce
from perfview.store import remote

MANIFEST = "manifest.json"


def default_output(files: Sequence[str | Path]) -> Path:
    """A cache folder named after the job's files (same files → same folder)."""
    from perfview.store.parsed_columns import cache_dir

    digest = hashlib.sha256("\n".join(str(f) for f in files).encode()).hexdigest()[:16]
    return cache_dir() / "jobs" / digest


def _events_frame(events: pd.DataFrame) -> pd.DataFrame:
    """Events with text categories as plain strings (Parquet dictionary columns either way)."""
    out = events.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(str)
    return out


def cluster_task(path: str, order: int, output: str) -> RankReduction | RankFailure:
    """Parse one rank where it lives, write its Parquet columns, return its reduction."""

    def write_parquet(timeline: Timeline, reduction: RankReduction) -> None:
        folder = Path(output) / f"{order:05d}"
        folder.mkdir(parents=True, exist_ok=True)
        _events_frame(timeline.events).to_parquet(folder / "events.parquet", index=False)
        reduction.comms.to_parquet(folder / "collectives.parquet", index=False)
        reduction.steps.to_parquet(folder / "steps.parquet", index=False)

    # a Dask worker process parses rank after rank: see WORKER_COMPILED
    return parse_and_reduce(path, order, write_parquet, compiled=WORKER_COMPILED)


def write_manifest(job: Job, output: Path) -> Path:
    """manifest.json: the job's clock and, per rank, its Parquet files and time offset."""
    ranks = [
        {
            "rank": r.rank,
            "source": r.source,
            "path": r.path,
            "origin_ns": r.origin_ns,
            "offset_ns": int(job.offsets.get(r.rank, 0)),
            "events": f"{r.order:05d}/events.parquet",
            "collectives": f"{r.order:05d}/collectives.parquet",
            "steps": f"{r.order:05d}/steps.parquet",
        }
        for r in job.ranks
    ]
    doc = {
        "clock": job.clock,
        "warnings": job.warnings,
        "failed": [{"path": f.path, "reason": f.reason} for f in job.failures],
        "ranks": ranks,
    }
    target = output / MANIFEST
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, target)
    return target


def open_job_on_cluster(
    sources: Sequence[str | Path], address: Any, output: Path | None = None
) -> Job:
    """Open a job on the Dask scheduler at `address` (or a `distributed.Client`)."""
    from distributed import Client

    files = job_sources(sources)  # URLs stay URLs: each worker reads its own rank
    out = (output or default_output(files)).resolve()
    inputs = {Path(f).parent.resolve() for f in files if not remote.is_url(f)}
    if out in inputs:
        raise LoadError(f"the output folder {out} is an input folder; choose another --output")
    out.mkdir(parents=True, exist_ok=True)
    own = not isinstance(address, Client)
    client = Client(address, timeout=30) if own else address  # type: ignore[no-untyped-call]
    try:
        futures = client.map(
            cluster_task, files, list(range(len(files))),
            output=str(out), pure=False,
        )  # fmt: skip
        results = client.gather(futures)
    finally:
        if own:
            client.close()
    job = assemble(list(results))
    if not job.ranks:
        reasons = "; ".join(f"{Path(f.path).name}: {f.reason}" for f in job.failures[:3])
        raise LoadError(f"no rank trace could be opened ({reasons})")
    write_manifest(job, out)
    return job


def query(output: Path, sql: str) -> pd.DataFrame:
    """Run DuckDB SQL over a job's Parquet files: views `events`, `collectives`, `steps`.

    Each view is every rank's file of that name with a `rank` column added, so one query spans
    all ranks (e.g. the 10 longest kernels of the job, or comm time per rank and step).
    """
    import duckdb

    doc = json.loads((output / MANIFEST).read_text())
    con = duckdb.connect()
    try:
        for table in ("events", "collectives", "steps"):
            parts = [
                f"SELECT {int(r['rank'])} AS rank, * FROM read_parquet('{output / r[table]}')"
                for r in doc["ranks"]
            ]
            con.execute(f"CREATE VIEW {table} AS " + " UNION ALL ".join(parts))
        frame: pd.DataFrame = con.execute(sql).df()
        return frame
    finally:
        con.close()


__all__ = ["MANIFEST", "cluster_task", "default_output", "open_job_on_cluster", "query"]
