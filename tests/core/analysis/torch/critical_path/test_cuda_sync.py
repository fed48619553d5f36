"""kineto's `cuda_sync` "Stream Wait Event" records as edges between streams.

The trace: a 40 µs `producer` on stream 7 (queued before the cudaEventRecord, correlation 2),
a `decoy` on stream 20 that ends at 47 µs, and a `consumer` on stream 13 queued after the
cudaStreamWaitEvent (correlation 3) that starts at 48 µs, 3 µs after the producer ended; the
host waits in cudaDeviceSynchronize. kineto's record says the consumer waited on stream 7's
event. Without it the graph can only guess, and guesses the stream whose work ended last before
the consumer started: the decoy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.core.analysis.torch.critical_path import path
from tests.core.analysis.torch.critical_path._tiny import (
    US,
    Ev,
    kernel,
    launch,
    loaded,
    sync,
    write,
)

EVENTS: list[Ev] = [
    launch(2, 2, 1), kernel("producer", 5, 40, 1, stream=7),
    ("cudaEventRecord", "cuda_runtime", 6, 1, 2, None),
    ("cudaStreamWaitEvent", "cuda_runtime", 8, 1, 3, None),
    launch(10, 2, 4), kernel("consumer", 48, 10, 4, stream=13),
    launch(13, 2, 5), kernel("decoy", 20, 27, 5, stream=20),
    sync("cudaDeviceSynchronize", 16, 44),
]  # fmt: skip
WAIT: dict[str, Any] = {
    "ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 13, "ts": 9,
    "dur": 0, "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": 7,
                       "wait_on_cuda_event_record_corr_id": 2, "wait_on_cuda_event_id": 1,
                       "stream": 13, "correlation": 3, "device": 0, "context": 1},
}  # fmt: skip
# the step's 100 µs: CPU up to the sync and after it, the producer, the recorded wait, the
# consumer, the 2 µs the sync took to return, 3 µs of launch
EXPECTED = {
    ("cpu_op", "ProfilerStep#1"): 42, ("kernel", "producer"): 40, ("kernel", "consumer"): 10,
    ("sync", "Stream Wait Event"): 3, ("launch", "cudaLaunchKernel"): 3,
    ("sync", "cudaDeviceSynchronize"): 2,
}  # fmt: skip


def _trace(tmp_path: Path, *, recorded: bool) -> Path:
    trace = write(tmp_path / f"wait-{recorded}.json", EVENTS)
    if recorded:
        doc = json.loads(trace.read_text())
        doc["traceEvents"].append(WAIT)
        trace.write_text(json.dumps(doc))
    return trace


def test_the_path_crosses_the_recorded_wait(tmp_path: Path) -> None:
    table = path.critical_path_table(loaded(_trace(tmp_path, recorded=True)))
    got = {(c, n): ns for c, n, ns in table[["category", "name", "ns"]].itertuples(index=False)}
    assert got == {k: v * US for k, v in EXPECTED.items()}
    assert table["ns"].sum() == 100 * US


def test_without_the_record_the_guess_takes_the_other_stream(tmp_path: Path) -> None:
    table = path.critical_path_table(loaded(_trace(tmp_path, recorded=False)))
    names = set(table["name"])
    assert "decoy" in names
    assert "producer" not in names
    assert table["ns"].sum() == 100 * US


def test_the_cli_names_the_wait(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _trace(tmp_path, recorded=True)
    code = cli.main(["summary", str(trace), "--view", "critical-path", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert {"step": 1, "category": "sync", "name": "Stream Wait Event", "ns": 3 * US,
            "share_pct": pytest.approx(3.0)} in rows  # fmt: skip
