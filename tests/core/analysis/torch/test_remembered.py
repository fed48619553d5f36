"""Everything the torch pages remember shares one memory budget (`remembered`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis.torch import common, overview, remembered
from perfview.core.analysis.torch.common import per_events
from perfview.core.analysis.torch.critical_path.graph import build_graph
from perfview.core.model import Timeline
from tests.core.analysis.torch._raw import NCCL, timeline


@dataclass
class _Pair:
    a: np.ndarray
    b: pd.DataFrame


def test_nbytes_counts_the_arrays_of_what_the_pages_remember() -> None:
    frame = pd.DataFrame({"x": np.zeros(10, dtype=np.int64)})
    value = (_Pair(np.zeros(4, dtype=np.int32), frame), [np.zeros(3)], {"k": np.zeros(2)}, "s")
    assert remembered.nbytes(value) == 16 + frame.memory_usage(index=True).sum() + 24 + 16
    graph = build_graph(timeline(NCCL))
    assert remembered.nbytes(graph) > 0


def test_least_recently_used_results_go_first_and_one_over_the_budget_is_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(remembered, "BUDGET", 3000)  # what other tests remembered goes too
    first, second = remembered.Store(), remembered.Store()
    first.put("a", np.zeros(100))  # 800 bytes each
    second.put("b", np.zeros(100))
    assert first.get("a") is not None  # now the most recently used
    first.put("c", np.zeros(100))
    second.put("d", np.zeros(100))  # over 3000 with the others' bytes: "b" goes first
    assert second.get("b") is None
    assert first.get("a") is not None
    assert first.get("c") is not None
    first.put("huge", np.zeros(1000))  # 8000 bytes: handed out, never kept
    assert first.get("huge") is None
    for store, key in ((first, "a"), (first, "c"), (second, "d")):
        store.pop(key)
    assert remembered.total() == 0


def test_a_trace_result_over_the_budget_is_made_again_each_time_and_stays_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The critical path's graph of a huge trace is not kept (memory), and each ask still
    gives the same answer; within the budget it is made once."""
    calls: list[int] = []

    @per_events
    def steps(tl: Timeline) -> pd.DataFrame:
        calls.append(1)
        return overview.steps_table(tl)

    tl = timeline(NCCL)
    first = steps(tl)
    assert len(steps(tl)) == len(first)
    assert len(calls) == 1
    monkeypatch.setattr(remembered, "BUDGET", 1)
    other = dataclasses.replace(tl, events=tl.events.copy())  # another trace's table
    a, b = steps(other), steps(other)
    assert len(calls) == 3
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, first)


def test_a_mask_is_remembered_a_bit_a_row_and_handed_out_whole() -> None:
    """The kind and name masks are kept packed (a 20 GB trace's were 67 MB each); each ask
    gets the same rows as a fresh computation, in an array of its own."""
    tl = timeline(NCCL)
    events = tl.events
    fresh = (events["kind"] == "kernel").to_numpy()
    before = remembered.total()
    first = common.kind_mask(events, ("kernel",))
    assert remembered.total() - before <= len(events) // 8 + 1
    assert first.dtype == bool
    assert np.array_equal(first, fresh)
    first[:] = ~first  # the caller's own: the next ask is unchanged
    again = common.kind_mask(events, ("kernel",))
    assert np.array_equal(again, fresh)
    assert remembered.total() - before <= len(events) // 8 + 1  # remembered once
