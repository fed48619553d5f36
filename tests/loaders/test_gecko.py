"""Firefox Profiler (Gecko) profiles: raw and processed shapes load under a neutral name, with
per-thread sample counts and per-function self counts equal to an independent walk of the file."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from perfview.core.model.errors import LoadError
from perfview.loaders import FRESH, detect, load
from tests.conftest import DATA

GECKO = DATA / "gecko"
FILES = sorted(p.name for p in GECKO.glob("*.json"))


def _columns(table: dict[str, Any]) -> dict[str, list[Any]]:
    if "schema" in table:
        return {
            k: [row[i] if i < len(row) else None for row in table["data"]]
            for k, i in table["schema"].items()
        }
    return table


def _walk(profile: Any) -> list[tuple[dict[str, Any], list[str]]]:
    """Every thread with its strings: a plain reading of the format, independent of the loader."""
    if isinstance(profile, str):
        profile = json.loads(profile)
    shared = profile.get("shared", {}).get("stringArray")
    out = []
    for thread in profile.get("threads", []):
        if isinstance(thread, str):
            out += _walk(json.loads(thread))
            continue
        out.append((thread, thread.get("stringArray", thread.get("stringTable", shared))))
    for child in profile.get("processes", []):
        out += _walk(child)
    return out


def _leaf_names(thread: dict[str, Any], strings: list[str]) -> Counter[str]:
    """Samples per leaf frame name, one sample at a time."""
    stacks, frames = _columns(thread["stackTable"]), _columns(thread["frameTable"])
    samples = _columns(thread["samples"])
    counts: Counter[str] = Counter()
    for stack in samples["stack"]:
        if stack is None:
            continue
        frame = stacks["frame"][stack]
        if "func" in frames:
            name = strings[_columns(thread["funcTable"])["name"][frames["func"][frame]]]
        else:
            name = strings[frames["location"][frame]]
            name = name.split(" (")[0] if name.endswith(")") and " (" in name else name
        counts[name] += 1
    return counts


@pytest.mark.parametrize("name", FILES)
def test_a_profile_loads_under_a_neutral_name_with_the_files_counts(
    name: str, tmp_path: Path
) -> None:
    neutral = tmp_path / "profile.dat"
    shutil.copy(GECKO / name, neutral)
    assert detect(neutral).NAME == "gecko"
    bundle = load(neutral, options=FRESH)
    threads = _walk(json.loads((GECKO / name).read_text()))
    with_samples = [
        (t, s) for t, s in threads if any(x is not None for x in _columns(t["samples"])["stack"])
    ]
    assert bundle.format == "sampled"
    assert bundle.sampled is not None
    assert bundle.tree is not None
    assert bundle.counts["threads"] == len(with_samples)
    expected = [len(_columns(t["samples"])["stack"]) for t, _s in with_samples]
    assert bundle.sampled.threads["samples"].tolist() == expected
    leaves: Counter[str] = Counter()
    for thread, strings in with_samples:
        leaves += _leaf_names(thread, strings)
    tree = bundle.tree
    self_by_name: Counter[str] = Counter()
    for node in range(1, len(tree.parent)):
        value = float(tree.metrics["self_ns"][node])
        if value:
            self_by_name[tree.name(node)] += round(value)
    assert self_by_name == leaves
    assert float(tree.metrics["total_ns"][0]) == pytest.approx(sum(expected))


def test_python_sampler_profile_names_functions_files_and_threads() -> None:
    bundle = load(GECKO / "sampled_py.json", options=FRESH)
    assert bundle.sampled is not None
    assert bundle.tree is not None
    assert {n.split(" (")[0] for n in bundle.sampled.threads["name"]} == {"MainThread", "worker"}
    frames = bundle.tree.frames
    spin = frames[frames["name"] == "_spin"]
    assert len(spin) == 1
    assert spin["file"].iloc[0] == "make_gecko_fixture.py"
    assert int(spin["line"].iloc[0]) > 0


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda d: d["threads"][0]["stackTable"]["prefix"].__setitem__(0, 5), "prefix"),
        (lambda d: d["threads"][0]["samples"]["stack"].__setitem__(0, 10**9), "refers past"),
        (lambda d: d["threads"][0]["frameTable"]["func"].__setitem__(0, -7), "refers past"),
        (lambda d: d["threads"][0].__setitem__("stackTable", 3), "not a table"),
    ],
)
def test_damaged_references_are_one_sentence(tmp_path: Path, mutate: Any, words: str) -> None:
    doc = json.loads((GECKO / "sampled_py.json").read_text())
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LoadError) as err:
        load(path, options=FRESH)
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_a_deep_stack_table_loads(tmp_path: Path) -> None:
    """A 5,000-deep chain of stacks (each the previous one's child: deep recursion) loads
    with its samples at the bottom, without a walk per stack per sample."""
    n = 5_000
    doc = {
        "meta": {"interval": 1, "version": 32, "preprocessedProfileVersion": 57},
        "threads": [
            {
                "name": "deep",
                "samples": {"stack": [n - 1] * 3, "time": [0, 1, 2], "length": 3},
                "stackTable": {"frame": [0] * n, "prefix": [None, *range(n - 1)], "length": n},
                "frameTable": {"func": [0], "line": [None], "length": 1},
                "funcTable": {"name": [1], "fileName": [None], "lineNumber": [None], "length": 1},
            }
        ],
        "shared": {"stringArray": ["(root)", "recurse"]},
    }
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(doc))
    bundle = load(path, options=FRESH)
    assert bundle.tree is not None
    assert float(bundle.tree.metrics["self_ns"].sum()) == 3
