"""Recordings without ProfilerStep slices: pseudo steps, top self times, the overview rows."""

from __future__ import annotations

import pytest

from perfview.core.analysis.torch import no_steps, overview
from perfview.core.analysis.torch.overview_table import overview_table
from tests.core.analysis.torch._raw import events, ns, timeline
from tests.core.analysis.torch._synthetic import make

CPU = "kineto_cpu/dtu_jc_resnet18_cpu_trace.json"


def test_whole_recording_is_one_step() -> None:
    tl = timeline(CPU)
    table = no_steps.pseudo_steps_table(tl)
    work = [e for e in events(CPU) if e.get("cat") != "Trace"]
    start = min(ns(e["ts"]) for e in work)
    end = max(ns(e["ts"]) + ns(e["dur"]) for e in work)
    assert table["label"].tolist() == ["whole recording"]
    assert int(table["dur_ns"].iat[0]) == end - start
    parts = table[[f"{n}_ns" for n in overview.BREAKDOWN]].to_numpy().sum()
    assert parts == end - start  # the categories split the span exactly


def test_top_level_annotations_are_the_steps() -> None:
    tl = make(
        [
            (0, 300, "load", "annotation", 0, -1, -1, 1),
            (10, 100, "inner", "annotation", 0, 0, -1, 2),  # nested: not a step of its own
            (20, 50, "aten::mm", "cpu_op", 0, 1, -1, 3),
            (400, 500, "train", "annotation", 0, -1, -1, 4),
            (450, 100, "gemm", "kernel", 1, -1, -1, 5),
        ]
    )
    table = no_steps.pseudo_steps_table(tl)
    assert table["label"].tolist() == ["load", "train"]
    assert table["dur_ns"].tolist() == [300, 500]
    assert table["cpu_exec_ns"].tolist() == [50, 0]
    assert table["kernel_ns"].tolist() == [0, 100]
    assert table["other_ns"].tolist() == [250, 400]


def test_top_operators_by_self_time_match_the_json() -> None:
    top = no_steps.top_self(timeline(CPU), "cpu_op")
    ops = sorted(events(CPU, "cpu_op"), key=lambda e: (e["tid"], ns(e["ts"]), -ns(e["dur"])))
    own = {id(e): ns(e["dur"]) for e in ops}
    stack: list[dict[str, object]] = []
    for e in ops:  # nesting by containment: a child's time leaves its parent's self time
        while stack and (
            stack[-1]["tid"] != e["tid"]
            or ns(e["ts"]) >= ns(stack[-1]["ts"]) + ns(stack[-1]["dur"])
        ):  # type: ignore[arg-type]
            stack.pop()
        if stack:
            own[id(stack[-1])] -= ns(e["dur"])
        stack.append(e)
    conv = [e for e in ops if e["name"] == "aten::mkldnn_convolution"]
    assert top["name"].iat[0] == "aten::mkldnn_convolution"
    assert int(top["calls"].iat[0]) == len(conv) == 20
    assert int(top["self_ns"].iat[0]) == sum(own[id(e)] for e in conv)
    assert top["self_ns"].is_monotonic_decreasing
    assert len(no_steps.top_self(timeline(CPU), "python")) == 0  # recorded without stacks


def test_overview_rows_say_how_to_get_steps() -> None:
    rows = overview_table(timeline(CPU))
    hint = rows[rows["key"] == "hint"]["value"].tolist()
    assert hint == [no_steps.HINT]
    share = rows[rows["section"] == "step breakdown (no steps: whole recording)"]
    assert share["number"].sum() == pytest.approx(100.0)


def test_hint_names_what_stands_for_a_step() -> None:
    tl = make(
        [
            (0, 300, "load", "annotation", 0, -1, -1, 1),
            (400, 500, "train", "annotation", 0, -1, -1, 4),
        ]
    )
    hint = no_steps.hint_for(no_steps.pseudo_steps_table(tl))
    assert hint.startswith("No ProfilerStep#N slices: each of the 2 top-level annotations is")
    assert no_steps.HOW_TO_STEP in hint
