"""Export to speedscope and collapsed stacks: round trips through perfview's own loaders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from perfview import cli, loaders
from perfview.core.analysis import tree_export as export
from perfview.core.analysis.bundle_tree import tree_for
from perfview.core.model import CallTree
from tests.conftest import sample


def paths(tree: CallTree) -> dict[tuple[str, ...], tuple[float, float]]:
    """Every node as its path of frame labels → (total, self), merged where labels repeat."""
    labels = [
        export.frame_label(str(n), str(f), int(ln))
        for n, f, ln in zip(
            tree.frames["name"], tree.frames["file"], tree.frames["line"], strict=True
        )
    ]
    out: dict[tuple[str, ...], tuple[float, float]] = {}
    key: list[tuple[str, ...]] = [()]
    for node in range(1, len(tree)):
        key.append((*key[int(tree.parent[node])], labels[int(tree.frame[node])]))
        total, self_ = out.get(key[node], (0.0, 0.0))
        out[key[node]] = (
            total + float(tree.metrics["total_ns"][node]),
            self_ + float(tree.metrics["self_ns"][node]),
        )
    return out


def _consistent(tree: CallTree) -> CallTree:
    """The tree with totals recomputed from self weights (what any stacks format can hold)."""
    total = tree.metrics["self_ns"].copy()
    for node in range(len(tree) - 1, 0, -1):
        total[tree.parent[node]] += total[node]
    metrics = dict(tree.metrics, total_ns=total)
    return CallTree(tree.parent, tree.frame, tree.frames, metrics)


ROUND_TRIP = [
    "collapsed/austin4_repeat.austin",
    "collapsed/pylaprof_flamegraph.txt",
    "speedscope/pyspy_cs336_multithread.speedscope.json",
    "speedscope/pyinstrument_pacdb.speedscope.json",
    "pyinstrument/pyinstrument3_renderer_json_sample.json",
    "pstats/gprof2dot_print1.pstats",
    "chrome_trace/viztracer_async_simple.json",
]


@pytest.mark.parametrize("rel", ROUND_TRIP)
@pytest.mark.parametrize("to", ["speedscope", "collapsed"])
def test_round_trip(rel: str, to: str, tmp_path: Path) -> None:
    bundle = loaders.load(sample(rel))
    tree = tree_for(bundle)
    assert tree is not None
    out = tmp_path / "unknown"
    if to == "speedscope":
        out.write_text(export.speedscope_json(tree))
    else:
        out.write_text(export.to_collapsed(tree))
    back = loaders.load(out)
    assert back.format == "sampled"
    assert back.tree is not None
    want = {
        k: v for k, v in paths(_consistent(tree)).items() if v[0] > 0
    }  # nodes without weight have no stack to carry them
    got = paths(back.tree)
    assert got.keys() == want.keys()
    for key, (total, self_) in want.items():
        assert got[key][0] == pytest.approx(total, rel=1e-9, abs=1e-6)
        assert got[key][1] == pytest.approx(self_, rel=1e-9, abs=1e-6)


def test_speedscope_document_shape(tmp_path: Path) -> None:
    bundle = loaders.load(sample("pstats/gprof2dot_print1.pstats"))
    doc = export.to_speedscope(tree_for(bundle))  # type: ignore[arg-type]
    assert doc["$schema"].endswith("file-format-schema.json")
    prof = doc["profiles"][0]
    assert prof["unit"] == "nanoseconds"
    assert len(prof["samples"]) == len(prof["weights"])
    n = len(doc["shared"]["frames"])
    assert all(0 <= f < n for stack in prof["samples"] for f in stack)


def test_semicolons_in_names_do_not_split_frames(tmp_path: Path) -> None:
    src = tmp_path / "a.speedscope.json"
    src.write_text(json.dumps({
        "$schema": export.SCHEMA, "shared": {"frames": [{"name": "a;b"}, {"name": "c"}]},
        "profiles": [{"type": "sampled", "unit": "none", "samples": [[0, 1]], "weights": [3]}],
    }))  # fmt: skip
    text = export.to_collapsed(loaders.load(src).tree)  # type: ignore[arg-type]
    assert text == "a:b;c 3\n"


def test_cli_export_and_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = sample("collapsed/brook_os_kernel_profile.folded")
    out = tmp_path / "out.json"
    assert cli.main(["export", str(src), "--to", "speedscope", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert sum(doc["profiles"][0]["weights"]) == 70275
    assert cli.main(["export", str(src), "--to", "collapsed"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 32
    assert sum(int(line.rpartition(" ")[2]) for line in lines) == 70275
    copy = tmp_path / "in.folded"
    copy.write_bytes(src.read_bytes())
    before = copy.read_bytes()
    assert cli.main(["export", str(copy), "--to", "collapsed", "-o", str(copy)]) == 2
    assert copy.read_bytes() == before
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "input file" in err
    bad = tmp_path / "bad"
    bad.write_bytes(b"\x00\x01 nothing")
    assert cli.main(["export", str(bad), "--to", "collapsed"]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert np.isfinite(doc["profiles"][0]["endValue"])
