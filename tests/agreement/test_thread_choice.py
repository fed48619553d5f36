"""A sampled profile's thread choice: all threads merged, or one, in the flame graphs.

py-spy's file of a 38 s run has four threads (one speedscope profile each, every sample
weighing 0.01 s); merged they weigh 101.81 s. One thread's tree weighs that thread's samples ×
the interval, counted here from the JSON itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfview.core.analysis import sampled_threads
from perfview.core.pages import PAGES
from perfview.loaders import load
from tests.conftest import DATA, sample

PYSPY = "speedscope/pyspy_cs336_multithread.speedscope.json"


def _per_thread(path: Path) -> dict[str, tuple[int, float]]:
    """(samples, interval s) per profile name, from the file; py-spy weighs every sample the
    same (its sampling interval)."""
    doc = json.loads(path.read_text())
    out = {}
    for prof in doc["profiles"]:
        weights = set(prof["weights"])
        assert len(weights) == 1
        out[prof["name"]] = (len(prof["samples"]), weights.pop())
    return out


def test_one_threads_total_is_its_samples_times_the_interval() -> None:
    path = sample(PYSPY)
    bundle = load(path)
    expected = _per_thread(path)
    listed = sampled_threads.choices(bundle)
    assert listed[0] == sampled_threads.ALL
    assert [c.name for c in listed[1:]] == list(expected)
    merged = bundle.tree
    assert merged is not None
    assert merged.metrics["total_ns"][0] == pytest.approx(101.81e9)
    for choice in listed[1:]:
        samples, interval = expected[choice.name]
        tree = sampled_threads.thread_tree(bundle, choice)
        assert tree is not None
        assert tree.metrics["total_ns"][0] == pytest.approx(samples * interval * 1e9)
        assert tree.metrics["calls"][0] == samples
        top = tree.children(0)
        assert [str(tree.frames["name"].iloc[tree.frame[k]]) for k in top] == [choice.name]


def test_resolve_by_id_name_or_fragment() -> None:
    bundle = load(sample(PYSPY))
    assert sampled_threads.resolve(bundle, "3").name.endswith('"MainThread"')
    assert sampled_threads.resolve(bundle, "mainthread").thread == 3
    with pytest.raises(ValueError, match="several threads"):
        sampled_threads.resolve(bundle, "_handle")
    with pytest.raises(ValueError, match="names no thread"):
        sampled_threads.resolve(bundle, "nope")


def test_cli_thread(capsys: pytest.CaptureFixture[str]) -> None:
    from perfview.cli import main

    path = sample(PYSPY)
    samples, interval = _per_thread(path)['Thread 0x1FA08F100 "MainThread"']
    args = ["summary", str(path), "--view", "icicle", "--format", "json", "--top", "0"]
    assert main([*args, "--thread", "MainThread"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    tops = [r for r in rows if r["depth"] == 1]
    assert len(tops) == 1
    assert tops[0]["total_ns"] == round(samples * interval * 1e9)
    assert main(args) == 0
    merged = json.loads(capsys.readouterr().out)["rows"]
    assert len([r for r in merged if r["depth"] == 1]) == 4
    assert main(["summary", str(path), "--view", "threads", "--thread", "1"]) == 2
    assert "--thread applies to --view icicle or tree" in capsys.readouterr().err
    assert main([*args, "--thread", "nope"]) == 2
    assert "names no thread" in capsys.readouterr().err


def test_single_thread_file_has_no_choice() -> None:
    bundle = load(DATA / "sampled" / "pyspy.speedscope.json")
    assert sampled_threads.choices(bundle) == [sampled_threads.ALL]
    assert sampled_threads.resolve(bundle, "0") == sampled_threads.ALL


def test_window_thread_picker(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Every flame graph page gets the same picker (declared by `Page.per_thread`); picking a
    thread redraws the page on screen from that thread's tree, and the other pages follow."""
    pytest.importorskip("pytestqt")
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab
    from perfview.qt.views.thread_picker import ThreadPicker

    path = sample(PYSPY)
    document = Document(load(path))
    tab = DocumentTab(document)
    qtbot.addWidget(tab)
    honour = [n for n in tab.view_names() if PAGES[n].per_thread]
    assert set(honour) >= {"icicle", "bottom-up", "sandwich", "tree"}
    for name in tab.view_names():
        assert tab.show_view(name)
        pickers = tab._pages[name].findChildren(ThreadPicker)
        assert len(pickers) == (1 if name in honour else 0), name
    assert tab.show_view("icicle")
    picker = tab._pages["icicle"].findChildren(ThreadPicker)[0]
    main = next(i for i in range(picker.box.count()) if "MainThread" in picker.box.itemText(i))
    with qtbot.waitSignal(document.thread_changed, timeout=10_000):
        picker.box.setCurrentIndex(main)
    samples, interval = _per_thread(path)['Thread 0x1FA08F100 "MainThread"']
    icicle = tab.view_widget("icicle")
    assert icicle is not None
    assert icicle.total[0] == pytest.approx(samples * interval * 1e9)  # type: ignore[attr-defined]
    other = tab._pages["tree"].findChildren(ThreadPicker)[0]
    assert other.box.currentIndex() == main  # every picker shows the document's choice
    assert tab.show_view("tree")
    tree_view = tab.view_widget("tree")
    assert tree_view is not None
    assert document.tree() is not None
    assert document.tree().metrics["calls"][0] == samples  # type: ignore[union-attr]
    with qtbot.waitSignal(document.thread_changed, timeout=10_000):
        other.box.setCurrentIndex(0)
    assert document.tree() is document.bundle.tree
