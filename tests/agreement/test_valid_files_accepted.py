"""Valid files that perfview refused, and JSON from tools it does not read named in the refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfview.core.analysis import sampled
from perfview.core.model.errors import LoadError
from perfview.loaders import load
from tests.conftest import DATA

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _speedscope(tmp_path: Path, samples: list) -> Path:  # type: ignore[type-arg]
    doc = {
        "$schema": SCHEMA,
        "shared": {"frames": [{"name": "main"}, {"name": "work"}, {"name": "idle"}]},
        "profiles": [
            {
                "type": "sampled",
                "name": "one frame per sample",
                "unit": "milliseconds",
                "startValue": 0,
                "endValue": 6,
                "samples": samples,
                "weights": [1, 2, 3],
            }
        ],
    }
    path = tmp_path / "single.speedscope.json"
    path.write_text(json.dumps(doc))
    return path


def test_speedscope_samples_of_a_single_frame_load(tmp_path: Path) -> None:
    """A sample that is one frame index, not a list of them (`"samples": [0, 1, 2]`): each is
    a one-frame stack, as speedscope itself draws it."""
    bundle = load(_speedscope(tmp_path, [0, 1, 1]))
    table = sampled.bundle_functions(bundle).set_index("name")
    assert table.loc["main", "total_ns"] == pytest.approx(1e6)
    assert table.loc["work", "total_ns"] == pytest.approx(5e6)
    assert bundle.counts["samples"] == 3


def test_speedscope_mixed_single_frames_and_lists_load(tmp_path: Path) -> None:
    bundle = load(_speedscope(tmp_path, [0, [0, 1], [0, 2]]))
    table = sampled.bundle_functions(bundle).set_index("name")
    assert table.loc["main", "total_ns"] == pytest.approx(6e6)
    assert table.loc["idle", "total_ns"] == pytest.approx(3e6)


def test_speedscope_sample_that_is_text_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(LoadError):
        load(_speedscope(tmp_path, ["a", [0], [1]]))


# Written by pyinstrument 5.1.3 profiling tests/data/sampled's small CPU script:
# `JSONForHTMLRenderer().render(session)` (the `{session, frame_tree}` data its HTML page
# embeds) and `pyinstrument -r html -o report.html prog.py`.
PYI5_DATA = DATA / "sampled" / "pyinstrument5_html_data.json"
PYI5_HTML = DATA / "sampled" / "pyinstrument5_report.html"


def _pyinstrument_totals(tree: dict) -> dict[tuple[str, str], float]:  # type: ignore[type-arg]
    """Seconds per (function, file) summed over outermost frames, from pyinstrument's tree."""
    out: dict[tuple[str, str], float] = {}

    def walk(node: dict, above: frozenset[tuple[str, str]]) -> None:  # type: ignore[type-arg]
        parts = node["identifier"].split("\x01")[0].split("\x00")
        name = (parts[0], parts[1] if len(parts) > 1 else "")
        if name not in above:
            out[name] = out.get(name, 0.0) + node["time"]
        for child in node["children"]:
            walk(child, above | {name})

    walk(tree, frozenset())
    return out


def _embedded(html: str) -> dict:  # type: ignore[type-arg]
    start = html.index("const sessionData = ") + len("const sessionData = ")
    doc, _ = json.JSONDecoder().raw_decode(html[start:])
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize("path", [PYI5_DATA, PYI5_HTML], ids=["renderer-data", "html"])
def test_pyinstrument5_renderer_data_and_html_load(path: Path) -> None:
    text = path.read_text()
    doc = json.loads(text) if path.suffix == ".json" else _embedded(text)
    want = _pyinstrument_totals(doc["frame_tree"])
    bundle = load(path)
    table = sampled.bundle_functions(bundle).set_index(["name", "file"])
    for key in [k for k in want if k[0] in ("work", "sleep", "main")]:
        assert table.loc[key, "total_ns"] == pytest.approx(want[key] * 1e9, rel=1e-6)
    assert bundle.tree is not None
    assert bundle.tree.metrics["total_ns"][0] == pytest.approx(doc["frame_tree"]["time"] * 1e9)
    assert bundle.counts["samples"] == doc["session"]["sample_count"]
    assert bundle.duration_ns == round(doc["session"]["duration"] * 1e9)


ROCPROFV3 = {"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}, "agents": [], "buffer_records": {}}]}


@pytest.mark.parametrize(("doc", "tool"), [(ROCPROFV3, "rocprofv3")], ids=["rocprofv3"])
def test_json_from_tools_perfview_does_not_read_is_named(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    doc: object,
    tool: str,
) -> None:
    from perfview.cli import main

    path = tmp_path / "profile.json"
    path.write_text(json.dumps(doc))
    assert main(["summary", str(path)]) != 0
    err = capsys.readouterr().err
    assert tool in err
    assert "does not read" in err
    assert len(err.strip().splitlines()) == 1  # one sentence, no traceback
