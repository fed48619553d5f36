"""Opening a multi-rank job: find the rank files, parse and reduce each rank in parallel.

`open_job(sources)` takes a folder, a glob pattern or several files and returns a
`perfview.core.analysis.torch.job.Job`. Each rank is parsed and reduced where it is parsed (a worker
process here, a Dask worker with `perfview.jobs.cluster`), so only the small per-rank
reductions ever reach the caller: the caller never holds every rank's events.
"""

from __future__ import annotations

from perfview.jobs.local import job_files, open_job, rank_task

__all__ = ["job_files", "open_job", "rank_task"]
