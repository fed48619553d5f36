"""speedscope, collapsed stacks and pyinstrument: counts checked against independent parsing."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from perfview import loaders
from perfview.core.analysis import sampled
from perfview.core.model.errors import LoadError
from perfview.core.pages import summary
from tests.conftest import SAMPLES

SPEEDSCOPE = sorted((SAMPLES / "speedscope").glob("*")) if SAMPLES.is_dir() else []
COLLAPSED = sorted((SAMPLES / "collapsed").glob("*")) if SAMPLES.is_dir() else []
PYINSTRUMENT = sorted((SAMPLES / "pyinstrument").glob("*")) if SAMPLES.is_dir() else []
OWN = Path(__file__).resolve().parent.parent / "data" / "sampled"


def _neutral(path: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "unknown"
    shutil.copyfile(path, copy)
    return copy


def speedscope_counts(path: Path) -> dict[str, int]:
    doc = json.loads(path.read_text())
    n = 0
    for prof in doc["profiles"]:
        if prof["type"] == "sampled":
            n += len(prof["samples"])
        else:
            n += sum(1 for ev in prof["events"] if ev["type"] == "O")
    return {"samples": n, "threads": len(doc["profiles"]), "frames": len(doc["shared"]["frames"])}


def collapsed_counts(path: Path) -> dict[str, int]:
    stacks: Counter[str] = Counter()
    frames: set[str] = set()
    lines = weight = 0
    threads: set[tuple[str, ...]] = set()
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        stack, _, count = line.rpartition(" ")
        stacks[stack] += 1
        lines += 1
        weight += int(count)
        parts = [f for f in stack.split(";") if f]
        frames.update(parts)
        if len(parts) > 1 and parts[0][:1] == "P" and parts[1][:1] == "T":
            threads.add((parts[0], parts[1]))
    return {
        "samples": lines,
        "threads": len(threads) or 1,
        "frames": len(frames),
        "stacks": len(stacks),
        "weight": weight,
    }


def pyinstrument_counts(path: Path) -> dict[str, int]:
    doc = json.loads(path.read_text())
    ids: set[object] = set()
    if "root_frame" in doc:
        todo = [doc["root_frame"]]
        while todo:
            node = todo.pop()
            ids.add((node["function"], node["file_path"], node["line_no"]))
            todo.extend(node["children"])
    else:  # the frames above where profiling started go, the last one stays (pyinstrument)
        cut = max(len(doc.get("start_call_stack", [])) - 1, 0)
        ids = {
            f.split("\x01")[0]
            for stack, _ in doc["frame_records"]
            for f in (stack[cut:] if stack[:cut] == doc["start_call_stack"][:cut] else stack)
        }
    return {"samples": doc["sample_count"], "threads": 1, "frames": len(ids)}


@pytest.mark.parametrize("path", SPEEDSCOPE, ids=lambda p: p.name)
def test_speedscope_counts(path: Path, tmp_path: Path) -> None:
    for where in (path, _neutral(path, tmp_path)):
        bundle = loaders.load(where)
        assert bundle.format == "sampled"
        assert bundle.counts == speedscope_counts(path)


@pytest.mark.parametrize("path", COLLAPSED, ids=lambda p: p.name)
def test_collapsed_counts(path: Path, tmp_path: Path) -> None:
    for where in (path, _neutral(path, tmp_path)):
        bundle = loaders.load(where)
        assert bundle.format == "sampled"
        assert bundle.counts == collapsed_counts(path)
        assert bundle.tree is not None
        assert bundle.tree.metrics["calls"][0] == bundle.counts["samples"]


@pytest.mark.parametrize("path", PYINSTRUMENT, ids=lambda p: p.name)
def test_pyinstrument_counts(path: Path, tmp_path: Path) -> None:
    for where in (path, _neutral(path, tmp_path)):
        bundle = loaders.load(where)
        assert bundle.format == "sampled"
        assert bundle.counts == pyinstrument_counts(path)


def test_pyspy_weights_and_threads(samples_dir: Path) -> None:
    path = samples_dir / "speedscope" / "pyspy_cs336_multithread.speedscope.json"
    doc = json.loads(path.read_text())
    bundle = loaders.load(path)
    assert bundle.tree is not None
    assert bundle.sampled is not None
    total = sum(sum(p["weights"]) for p in doc["profiles"])
    assert bundle.tree.metrics["total_ns"][0] == pytest.approx(total * 1e9)
    threads = summary.summarize(bundle, "threads")
    assert list(threads["samples"]) == [len(p["samples"]) for p in doc["profiles"]]
    # four profiles → four thread roots under the synthetic root
    assert len(bundle.tree.children(0)) == 4


def test_speedscope_bytes_unit_and_empty_profile(samples_dir: Path) -> None:
    bundle = loaders.load(samples_dir / "speedscope" / "clawscript_empty_cpu.speedscope.json")
    table = summary.summarize(bundle, "functions")
    assert bundle.sampled is not None
    assert bundle.sampled.unit == "bytes"
    assert table.set_index("name").loc["hashmap", "self_bytes"] == 144
    assert table.set_index("name").loc["<top>", "total_bytes"] == 144


def test_evented_speedscope_timeline(samples_dir: Path) -> None:
    path = samples_dir / "speedscope" / "pyinstrument_pacdb.speedscope.json"
    doc = json.loads(path.read_text())
    bundle = loaders.load(path)
    assert bundle.timeline is not None
    assert bundle.tree is not None
    assert len(bundle.timeline.events) == speedscope_counts(path)["samples"]
    prof = doc["profiles"][0]
    first_close = {ev["frame"]: ev["at"] for ev in reversed(prof["events"]) if ev["type"] == "C"}
    root_dur = first_close[prof["events"][0]["frame"]] - prof["events"][0]["at"]
    assert bundle.tree.metrics["total_ns"][0] == pytest.approx(root_dur * 1e9, rel=1e-9)


def test_collapsed_sums_identical_lines_and_keeps_spaces(tmp_path: Path) -> None:
    path = tmp_path / "unknown"
    path.write_text(
        "# a comment\n\nmain;do work (a.py:3) 5\nmain;do work (a.py:3) 7\nmain;idle 1\n 2\n"
    )
    bundle = loaders.load(path)
    assert bundle.counts == {"samples": 4, "threads": 1, "frames": 3, "stacks": 3, "weight": 15}
    table = sampled.functions_table(bundle.tree, "samples").set_index("name")  # type: ignore[arg-type]
    assert table.loc["do work", "self_samples"] == 12
    assert table.loc["do work", "file"] == "a.py"
    assert table.loc["do work", "line"] == 3
    assert table.loc["main", "total_samples"] == 13
    assert bundle.tree is not None
    assert bundle.tree.metrics["total_ns"][0] == 15


def test_recursion_counts_once_in_total(tmp_path: Path) -> None:
    path = tmp_path / "rec.folded"
    path.write_text("main;f;f;f 4\nmain;g 1\n")
    table = summary.summarize(loaders.load(path), "functions").set_index("name")
    assert table.loc["f", "total_samples"] == 4
    assert table.loc["f", "self_samples"] == 4
    assert table.loc["main", "total_samples"] == 5


@pytest.mark.parametrize(
    "text",
    [
        '{"$schema": "https://www.speedscope.app/file-format-schema.json", "profiles": []}',
        '{"$schema": "speedscope", "shared": {"frames": [{"name": "a"}]}, "profiles": '
        '[{"type": "sampled", "unit": "parsecs", "samples": [], "weights": []}]}',
        '{"$schema": "speedscope", "shared": {"frames": [{"name": "a"}]}, "profiles": '
        '[{"type": "sampled", "unit": "none", "samples": [[3]], "weights": [1]}]}',
        '{"$schema": "speedscope", "shared": {"frames": [{"name": "a"}]}, "profiles": '
        '[{"type": "evented", "unit": "none", "endValue": 1, "events": '
        '[{"type": "C", "at": 0, "frame": 0}]}]}',
        '{"$schema": "speedscope", "shared": {"frames": [{"name": "a"}]}, "profiles": '
        '[{"type": "sampled", "unit": "none", "samples": [[0.5]], "weights": [1]}]}',
        '{"root_frame": {"function": "f", "time": "soon", "children": []}}',
        "main;f 3\nmain;g x\n",
    ],
)
def test_bad_input_is_one_sentence(text: str, tmp_path: Path) -> None:
    path = tmp_path / "unknown"
    path.write_text(text)
    with pytest.raises(LoadError) as info:
        loaders.load(path)
    assert "\n" not in str(info.value)
    assert "internal error" not in str(info.value)


def test_functions_table_matches_tree_totals(samples_dir: Path) -> None:
    bundle = loaders.load(samples_dir / "pyinstrument" / "pyinstrument3_renderer_json_sample.json")
    table = summary.summarize(bundle, "functions")
    assert bundle.tree is not None
    # self weights partition the tree's total
    assert table["self_ns"].sum() == pytest.approx(bundle.tree.metrics["total_ns"][0], abs=64)
    assert np.all(table["total_ns"] >= table["self_ns"])


@pytest.mark.parametrize(
    "text",
    [
        "main;f 3\nmain;f 4\r\n# c\n\n 2\nmain;g (a b.py:1) 10\n",
        "a 1.5\n",
        "a;b  3\n",
        "  a;b 3\n",
        "a;b 1,2,3\n",
        "a;b x\n",
    ],
)
def test_fast_parse_agrees_with_the_line_parser(text: str) -> None:
    from perfview.loaders import collapsed

    fast = collapsed._parse_fast(text.encode())
    try:
        slow = collapsed._parse(text)
    except LoadError:
        assert fast is None
        return
    if fast is None:
        return  # unusual shapes go to the line parser, which is the reference
    assert fast[0] == slow[0]
    assert np.array_equal(fast[1], slow[1])
    assert np.array_equal(fast[2], slow[2])
    assert fast[3] == slow[3]


@pytest.mark.parametrize("path", COLLAPSED, ids=lambda p: p.name)
def test_real_collapsed_files_take_the_fast_path(path: Path) -> None:
    from perfview.loaders import collapsed

    raw = path.read_bytes()
    fast = collapsed._parse_fast(raw)
    assert fast is not None
    slow = collapsed._parse(raw.decode())
    assert fast[0] == slow[0]
    assert np.array_equal(fast[1], slow[1])


@pytest.mark.parametrize("path", SPEEDSCOPE, ids=lambda p: p.name)
def test_speedscope_raw_scan_agrees_with_plain_decode(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.loaders import speedscope

    fast = loaders.load(path)
    monkeypatch.setattr(speedscope, "stack_codes", lambda raw: None)
    slow = loaders.load(path)
    assert fast.counts == slow.counts
    assert fast.tree is not None
    assert slow.tree is not None
    assert np.array_equal(fast.tree.parent, slow.tree.parent)
    assert np.array_equal(fast.tree.frame, slow.tree.frame)
    assert np.allclose(fast.tree.metrics["total_ns"], slow.tree.metrics["total_ns"])


OWN_FILES = {
    "pyinstrument5.json": pyinstrument_counts,
    "cpu_hot.pyisession": pyinstrument_counts,
    "pyspy.speedscope.json": speedscope_counts,
    "pyspy.folded": collapsed_counts,
}


@pytest.mark.parametrize("name", sorted(OWN_FILES))
def test_todays_profiler_outputs(name: str, tmp_path: Path) -> None:
    """Files written by pyinstrument 5 and py-spy 0.4 (scripts/fixtures/make_sampled_fixtures.py) on
    tests/data/scripts/cpu_hot.py: counts as parsed here, and `crunch` is the hottest."""
    path = OWN / name
    for where in (path, _neutral(path, tmp_path)):
        bundle = loaders.load(where)
        assert bundle.counts == OWN_FILES[name](path)
    table = summary.summarize(bundle, "functions")
    self_col = next(c for c in table.columns if c.startswith("self_") and c != "self_pct")
    assert table.sort_values(self_col, ascending=False)["name"].iat[0] == "crunch"


def test_thread_roots_are_austin_or_pyspy_thread_frames(tmp_path: Path) -> None:
    path = tmp_path / "t.folded"
    path.write_text("P1;T0:11;main 3\nP1;T0:22;work 2\nTokenizer;run 1\nthread (0x7F01);idle 4\n")
    threads = summary.summarize(loaders.load(path), "threads")
    assert list(threads["name"]) == ["P1;T0:11", "P1;T0:22", "thread (0x7F01)", "(no thread)"]
    assert list(threads["samples"]) == [1, 1, 1, 1]
    assert list(threads["weight"]) == [3.0, 2.0, 4.0, 1.0]


def test_speedscope_weights_that_are_lists_are_one_sentence(tmp_path: Path) -> None:
    """Found by the fuzzer: `weights` holding lists of numbers (as many lists as samples) made
    numpy count four weights for two samples and fail inside bincount."""
    doc = {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": [{"name": "a"}, {"name": "b"}]},
        "profiles": [
            {
                "type": "sampled",
                "name": "p",
                "unit": "none",
                "startValue": 0,
                "endValue": 2,
                "samples": [[0, 1], [0]],
                "weights": [[1, 2], [3, 4]],
            }
        ],
    }
    path = tmp_path / "lists.speedscope.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LoadError, match="a weight that is not a number"):
        loaders.load(path, options=loaders.FRESH)
