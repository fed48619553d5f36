"""A subtree that runs at another place among its siblings is `moved`, not removed + inserted.

Built by construction: two tiny Chrome traces (one thread) written here and read by the trace
loader, whose call trees differ only as stated in each test.
"""

from __future__ import annotations

import json
from pathlib import Path

from perfview.core.compare.structure import diff_structure
from perfview.core.model import Timeline
from perfview.documents import OpenOptions, open_document

Node = tuple[str, list["Node"]]


def _events(nodes: list[Node], start: int, out: list[dict[str, object]]) -> int:
    """Lay `nodes` out one after the other from `start` (µs), each child inside its parent;
    returns the end. A node of k descendants lasts 10 µs + their time."""
    t = start
    for name, kids in nodes:
        end = _events(kids, t + 1, out) + 1
        out.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t,
                    "dur": end - t + 10})  # fmt: skip
        t = end + 11
    return t


def _trace(tmp: Path, name: str, nodes: list[Node]) -> Timeline:
    events: list[dict[str, object]] = []
    _events(nodes, 0, events)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"traceEvents": events}))
    timeline = open_document(path, options=OpenOptions()).bundle.timeline
    assert timeline is not None
    return timeline


def _rows(tmp: Path, a: list[Node], b: list[Node]) -> list[tuple[str, str]]:
    d = diff_structure(_trace(tmp, "a", a), _trace(tmp, "b", b))
    table = d.table
    return [(p.split("/", 1)[1], s) for p, s in zip(table["path"], table["status"], strict=True)]


def test_a_subtree_run_later_is_moved(tmp_path: Path) -> None:
    body: Node = ("body", [("inner", [])])
    a: list[Node] = [("step", [("load", []), body, ("save", []), ("log", [])])]
    b: list[Node] = [("step", [("load", []), ("save", []), ("log", []), body])]
    assert _rows(tmp_path, a, b) == [
        ("step", "changed"),
        ("step/load", "same"),
        ("step/save", "same"),
        ("step/log", "same"),
        ("step/body", "moved"),
        ("step/body/inner", "same"),
    ]
    d = diff_structure(_trace(tmp_path, "a", a), _trace(tmp_path, "b", b))
    assert d.first_path is not None
    assert d.first_path.endswith("step/body")
    moved = d.table[d.table["status"] == "moved"].iloc[0]
    # both durations known: the delta is a plain difference (the same content here)
    assert moved["delta_ns"] == moved["b_ns"] - moved["a_ns"] == 0


def test_a_moved_subtree_whose_content_changed_is_not_moved(tmp_path: Path) -> None:
    a: list[Node] = [("step", [("load", []), ("body", [("inner", [])]), ("save", []), ("log", [])])]
    b: list[Node] = [("step", [("load", []), ("save", []), ("log", []), ("body", [("other", [])])])]
    rows = _rows(tmp_path, a, b)
    assert "moved" not in {s for _, s in rows}
    assert ("step/body", "removed") in rows
    assert ("step/body", "inserted") in rows


def test_identical_traces_have_nothing_moved_and_swaps_move_one(tmp_path: Path) -> None:
    same: list[Node] = [("step", [("x", []), ("y", [("z", [])])])]
    assert {s for _, s in _rows(tmp_path, same, same)} == {"same"}
    swapped: list[Node] = [("step", [("y", [("z", [])]), ("x", [])])]
    rows = _rows(tmp_path, same, swapped)
    assert [s for _, s in rows].count("moved") == 1
    assert not {"inserted", "removed"} & {s for _, s in rows}
