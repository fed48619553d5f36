"""Two sampled profiles compare like two pstats files: per frame self/total, gate and tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfview import cli
from perfview.core.compare.diff import diff_all, diff_profiles, regressions
from perfview.loaders import load
from tests.conftest import sample

HEAD = "# austin: 3\n# mode: wall\n"
A = HEAD + "P1;T1;main (app.py:1);hot (app.py:5) 300\nP1;T1;main (app.py:1);cold (app.py:9) 100\n"
B = (
    HEAD
    + "P1;T1;main (app.py:1);hot (app.py:5) 600\nP1;T1;main (app.py:1);cold (app.py:9) 100\n"
    + "P1;T1;main (app.py:1);new (app.py:12) 50\n"
)


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.austin", tmp_path / "b.austin"
    a.write_text(A)
    b.write_text(B)
    return a, b


def test_frames_view_compares_self_weight(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    comp = diff_profiles(load(a), load(b))
    assert comp.view == "frames"
    assert comp.metric == "self_ns"
    rows = comp.table.set_index("function")
    assert rows.loc["hot", "self_ns_a"] == 300_000  # Austin µs → ns
    assert rows.loc["hot", "self_ns_b"] == 600_000
    assert rows.loc["hot", "self_ns_pct"] == pytest.approx(100.0)
    assert rows.loc["new", "status"] == "new"
    assert comp.total_a == 400_000
    assert comp.total_b == 750_000
    assert comp.tree is not None  # the differential icicle
    assert list(regressions(comp, 50.0)["function"]) == ["hot"]


def test_cli_gate_on_sampled_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _pair(tmp_path)
    assert cli.main(["diff", str(a), str(b), "--fail-above", "50"]) == 1
    assert "regression" in capsys.readouterr().err
    assert cli.main(["diff", str(a), str(a), "--fail-above", "50"]) == 0


def test_mixed_units_refused_in_one_sentence(tmp_path: Path) -> None:
    flat = tmp_path / "c.folded"
    flat.write_text("main;hot 3\n")
    a, _b = _pair(tmp_path)
    with pytest.raises(ValueError, match="weighted in ns"):
        diff_profiles(load(flat), load(a))


def test_diff_all_of_real_sampled_files() -> None:
    a = load(sample("speedscope/austin2speedscope_austin-python.json"))
    b = load(sample("collapsed/austin4_repeat.austin"))
    comparisons, errors = diff_all(a, b)
    assert list(comparisons) == ["frames"]
    assert errors == {}
    assert comparisons["frames"].total_a == pytest.approx(725_562_000)
    assert comparisons["frames"].total_b == pytest.approx(1_706_506_000)
