"""`perfview examples`: the demo list, and every demo recorded slow and fixed.

The recording test runs each demo in a child process exactly as a user would
(`python -m perfview examples run NAME [--fixed] -o OUT`), then checks the advice: the slow
form triggers the demo's recommendation and the fixed form does not, and `perfview diff` shows
the fixed form's operators take less time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.core.analysis.torch.recommend import recommendations
from perfview.loaders import load
from perfview.runner.examples import DEMOS, record_argv

ROOT = Path(__file__).resolve().parent.parent


def test_list_names_every_demo_and_its_advice(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["examples"]) == 0
    out = capsys.readouterr().out
    for demo in DEMOS.values():
        assert demo.name in out
        assert demo.finding in out
        assert demo.path.is_file()


def test_unknown_demo_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["examples", "run", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("perfview: there is no demo 'nope'")
    assert err.count("\n") == 1


def test_record_argv_uses_the_demo_options() -> None:
    argv = record_argv(DEMOS["pairwise-loop"], "out.json.gz", fixed=True)
    assert argv[:2] == ["--mode", "torch"]
    assert "--with-stack" in argv
    assert argv[-2:] == [str(DEMOS["pairwise-loop"].path), "--fixed"]


def _record(name: str, out: Path, fixed: bool) -> None:
    # one intra-op thread: on a shared CI box, oversubscribed OpenMP threads spin and make the
    # compute (not the loading) dominate, which is not what the demos are about
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "perfview", "examples", "run", name, "-o", str(out)]
    # a fixed form may run torch.compile: on a machine whose inductor cache is cold (a fresh
    # clone and environment, as CI's) its first compile took over 180 s on 2 cores, 5 s after
    done = subprocess.run(
        cmd + (["--fixed"] if fixed else []),
        env=env, capture_output=True, text=True, timeout=900 if fixed else 180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == str(out)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DEMOS))
def test_demo_slow_form_gets_its_advice_and_fixed_form_does_not(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = DEMOS[name]
    slow, fixed = tmp_path / "slow.pt.trace.json.gz", tmp_path / "fixed.pt.trace.json.gz"
    _record(name, slow, fixed=False)
    _record(name, fixed, fixed=True)
    titles = {}
    for form, path in (("slow", slow), ("fixed", fixed)):
        timeline = load(path).timeline
        assert timeline is not None
        titles[form] = [f.title for f in recommendations(timeline)]
    assert demo.finding in titles["slow"]
    assert demo.finding not in titles["fixed"]
    assert cli.main(["diff", str(slow), str(fixed), "--format", "json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    if name != "slow-dataloader":  # the loader's win is in waiting time, not operator time
        assert diff["total_delta_pct"] < -50


def test_run_without_output_goes_to_the_runs_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recorder is faked (torch is not needed): the run folder, record and path printing."""
    from perfview import examples_cli
    from perfview.runner import record
    from perfview.runner.spec import list_runs

    def fake_execute(spec: Any) -> int:
        Path(spec.output).write_bytes(b"{}")
        return 0

    monkeypatch.setenv("PERFVIEW_RUNS_DIR", str(tmp_path))
    monkeypatch.setattr(record, "execute", fake_execute)
    assert examples_cli.record_demo("slow-dataloader", True, None) == 0
    runs = list_runs(tmp_path)
    assert len(runs) == 1
    assert runs[0].status == "ok"
    assert runs[0].args == ["--fixed"]
    assert capsys.readouterr().out.strip() == runs[0].output


def test_run_without_torch_says_so_and_leaves_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfview import examples_cli
    from perfview.runner import record

    monkeypatch.setenv("PERFVIEW_RUNS_DIR", str(tmp_path))
    monkeypatch.setattr(record, "missing_module", lambda mode: "torch")
    assert examples_cli.record_demo("pairwise-loop", False, None) == record.EXIT_USAGE
    assert "needs the 'torch' package" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
