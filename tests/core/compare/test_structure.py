"""Structural alignment of two torch traces (tests/data/diff/structure, from
scripts/fixtures/make_structure_fixtures.py): the candidate inserts `aten::tanh` after the ReLU
in each of its two forward passes, and nothing else differs in the program."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfview.core.compare.structure import diff_structure
from perfview.core.model import Timeline
from perfview.documents import OpenOptions, open_document

DATA = Path(__file__).resolve().parents[2] / "data" / "diff"
STRUCTURE = DATA / "structure"


def _timeline(path: Path) -> Timeline:
    timeline = open_document(path, options=OpenOptions()).bundle.timeline
    assert timeline is not None
    return timeline


@pytest.fixture(scope="module")
def traces() -> tuple[Timeline, Timeline]:
    return _timeline(STRUCTURE / "a.pt.trace.json.gz"), _timeline(STRUCTURE / "b.pt.trace.json.gz")


def _short(path: str) -> str:
    return path.split("/", 1)[1]  # drop the lane label (thread ids differ per run)


def test_the_inserted_op_is_found_in_place(traces: tuple[Timeline, Timeline]) -> None:
    d = diff_structure(*traces)
    t = d.table
    differs = t[t["status"] != "same"]
    assert [(_short(p), s) for p, s in zip(differs["path"], differs["status"], strict=True)] == [
        ("forward", "changed"),
        ("forward/aten::tanh", "inserted"),
        ("forward#1", "changed"),
        ("forward#1/aten::tanh", "inserted"),
    ]
    assert d.first_path is not None
    assert _short(d.first_path) == "forward/aten::tanh"
    # it sits right after the ReLU and before the second linear layer of that pass
    at = d.first_divergence
    assert at is not None
    before = t.iloc[:at]
    assert _short(before[before["depth"] == 1]["path"].iloc[-1]) == "forward/aten::relu"
    assert _short(t.iloc[at + 1]["path"]) == "forward/aten::linear#1"
    tanh = t.iloc[at]
    assert tanh["a_ns"] != tanh["a_ns"]  # NaN: absent from A
    assert tanh["b_ns"] == tanh["delta_ns"] > 0
    # where it would be in A: the end of A's ReLU, its previous aligned sibling
    relu = t[t["path"].str.endswith("/forward/aten::relu")].iloc[0]
    assert tanh["a_at"] == relu["a_at"] + relu["a_ns"]


def test_a_trace_against_itself_is_all_same(traces: tuple[Timeline, Timeline]) -> None:
    d = diff_structure(traces[0], traces[0])
    assert set(d.table["status"]) == {"same"}
    assert d.first_divergence is None
    assert (d.table["delta_ns"] == 0).all()


def test_swapping_sides_turns_inserted_into_removed(traces: tuple[Timeline, Timeline]) -> None:
    d = diff_structure(traces[1], traces[0])
    removed = d.table[d.table["status"] == "removed"]
    assert [_short(p) for p in removed["path"]] == ["forward/aten::tanh", "forward#1/aten::tanh"]
    assert removed["delta_ns"].lt(0).all()


def test_every_event_of_a_side_is_accounted_for(traces: tuple[Timeline, Timeline]) -> None:
    a, b = traces
    d = diff_structure(a, b)
    on_b = d.table[d.table["status"] != "removed"]
    kept = b.events[~b.events["kind"].isin(["trace", "gpu_annotation"])]
    assert len(on_b) == len(kept)  # inserted subtrees here are single ops


def test_two_ranks_kernels_follow_their_launches() -> None:
    from tests.conftest import sample

    a = _timeline(sample("kineto_gpu/hta_sampled_rank-0.json.gz"))
    b = _timeline(sample("kineto_gpu/hta_sampled_rank-1.json.gz"))
    d = diff_structure(a, b)
    t = d.table
    # every GPU kernel of a CUDA launch hangs under it, so it is aligned with its op
    under_launch = t[t["path"].str.contains("cudaLaunchKernel[^/]*/", regex=True)]
    assert len(under_launch) > 100
    assert set(t["status"]) == {"same", "changed", "inserted", "removed", "moved"}
    # the ranks feed different batch shapes into the same ops: the first difference is one
    assert d.first_path is not None
    assert d.first_path.endswith("/forward/fbgemm::permute_sparse_features")
    assert t["status"].iloc[d.first_divergence or 0] == "changed"
