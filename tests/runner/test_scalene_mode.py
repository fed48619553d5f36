"""`perfview record --mode scalene`: Scalene runs the script as its child and its JSON profile
opens as a Scalene line report where the script spends its time; without Scalene the mode is
one sentence."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from perfview.core.analysis import scalene_tables
from perfview.loaders import load
from perfview.runner import record, scalene_mode
from perfview.runner.spec import RunSpec

SCRIPT = Path(__file__).resolve().parent.parent / "data" / "scripts" / "cpu_hot.py"


def _run(spec: RunSpec) -> tuple[int, str]:
    err = io.StringIO()
    code = record.execute(spec.resolved(), err=err)
    return code, err.getvalue()


def test_command_lines_of_both_scalene_releases() -> None:
    spec = RunSpec("scalene", "/s/a.py", args=("1", "x"), output="/o/p.json")
    new = scalene_mode.command(spec, "/o/p.json", (2, 4))
    assert new[-7:] == ["run", "-o", "/o/p.json", "/s/a.py", "---", "1", "x"]
    old = scalene_mode.command(spec, "/o/p.json", (1, 5))
    assert old[-8:] == ["--cli", "--json", "--outfile", "/o/p.json", "/s/a.py", "---", "1", "x"]


def test_without_scalene_the_mode_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record, "missing_module", lambda mode: "scalene")
    code, err = _run(RunSpec("scalene", str(SCRIPT), output=str(tmp_path / "p.json")))
    assert code != 0
    assert "needs the 'scalene' package" in err


@pytest.mark.slow
@pytest.mark.skipif(scalene_mode.version() is None, reason="Scalene is not installed")
def test_hottest_line_is_in_crunch(tmp_path: Path) -> None:
    out = tmp_path / "cpu.scalene.json"
    code, err = _run(RunSpec("scalene", str(SCRIPT), args=("0.5",), output=str(out)))
    assert code == 0, err
    bundle = load(out)
    assert bundle.format == "scalene"
    assert bundle.lines is not None
    table = scalene_tables.lines_table(bundle.lines)
    assert int(table["line"].to_numpy()[0]) in (9, 10)  # crunch's loop
    assert "crunch" in set(scalene_tables.functions_table(bundle.lines)["function"])
