"""RunSpec → argv, option parsing, and the runs folder index."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

import perfview
from perfview.runner import spec as S
from perfview.runner import spec_args as A
from perfview.runner.spec import RunOptions, RunRecord, RunSpec


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    A.add_arguments(parser)
    return parser.parse_args(argv)


def test_argv_per_mode_carries_only_its_options(tmp_path: Path) -> None:
    opts = RunOptions(
        record_shapes=True,
        with_stack=True,
        schedule=(1, 1, 3, 1),
        step_every=0.5,
        interval=0.2,
        functions=("work", "Model.forward"),
        precision=2,
    )
    torch = RunSpec(
        "torch", "/s/train.py", ("--lr", "0.1"), "/w", "/venv/bin/python", "/o/t.json.gz", opts
    )
    assert torch.argv() == [
        "/venv/bin/python",
        "-m",
        "perfview.runner.record",
        "--mode",
        "torch",
        "-o",
        "/o/t.json.gz",
        "--cwd",
        "/w",
        "--record-shapes",
        "--with-stack",
        "--schedule",
        "1,1,3,1",
        "--step-every",
        "0.5",
        "--",
        "/s/train.py",
        "--lr",
        "0.1",
    ]
    lines = RunSpec("memory-lines", "/s/a.py", options=opts).record_args()
    assert lines == [
        "--mode",
        "memory-lines",
        "--function",
        "work",
        "--function",
        "Model.forward",
        "--precision",
        "2",
        "--",
        "/s/a.py",
    ]
    mem = RunSpec("memory", "/s/a.py", options=RunOptions(include_children=False))
    assert mem.record_args() == [
        "--mode",
        "memory",
        "--interval",
        "0.1",
        "--no-children",
        "--",
        "/s/a.py",
    ]
    assert RunSpec("cprofile", "/s/a.py").record_args() == ["--mode", "cprofile", "--", "/s/a.py"]


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        RunSpec("perf", "a.py")


def test_argv_parses_back_to_the_same_spec(tmp_path: Path) -> None:
    spec = RunSpec(
        "torch",
        str(tmp_path / "t.py"),
        ("-x", "--", "y"),
        str(tmp_path),
        None,
        str(tmp_path / "o.json"),
        RunOptions(profile_memory=True, schedule=(0, 1, 2, 1), step_on_optimizer=True),
    )
    back = A.spec_from_args(_parse(spec.record_args()))
    assert back == spec


def test_cli_args_after_script_belong_to_the_script(tmp_path: Path) -> None:
    ns = _parse(["--mode", "cprofile", "script.py", "--mode", "x", "-o", "y"])
    got = A.spec_from_args(ns, base=str(tmp_path))
    assert got.script == str(tmp_path / "script.py")
    assert got.args == ("--mode", "x", "-o", "y")
    assert got.output is None
    assert got.cwd == str(tmp_path)


def test_schedule_parsing() -> None:
    assert S.parse_schedule("1,2,3") == (1, 2, 3, 1)
    assert S.parse_schedule(" 0, 1, 5, 0 ") == (0, 1, 5, 0)
    for bad in ("1,2", "1,2,0", "a,b,c", "1,-1,2"):
        with pytest.raises(ValueError, match=r"schedule|invalid literal"):
            S.parse_schedule(bad)
    with pytest.raises(SystemExit):
        _parse(["--mode", "torch", "--schedule", "1,2", "s.py"])


def test_dict_round_trip_survives_json() -> None:
    spec = RunSpec(
        "memory-lines",
        "/a.py",
        ("1",),
        "/w",
        "/py",
        None,
        RunOptions(functions=("f", "g"), schedule=(1, 1, 1, 1)),
    )
    assert RunSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


def test_child_env_makes_perfview_importable_and_unbuffered() -> None:
    env = RunSpec("cprofile", "/a.py").child_env({"PYTHONPATH": "/mine", "HOME": "/h"})
    root = str(Path(perfview.__file__).resolve().parent.parent)
    assert env["PYTHONPATH"].split(":") == [root, "/mine"]
    assert env[S.BOOTSTRAP_ENV] == root
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["HOME"] == "/h"


def test_runs_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(S.RUNS_ENV, str(tmp_path / "r"))
    assert S.runs_dir() == tmp_path / "r"
    monkeypatch.delenv(S.RUNS_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert S.runs_dir() == tmp_path / "xdg" / "perfview" / "runs"


def test_run_folders_are_unique_and_named(tmp_path: Path) -> None:
    spec = RunSpec("torch", "/x/my train.py")
    first = S.new_run_dir(spec, tmp_path, now=0)
    second = S.new_run_dir(spec, tmp_path, now=0)
    assert first.name.endswith("-my_train-torch")
    assert second.name == first.name + "-2"
    prepared, folder = S.prepare_output(spec, tmp_path)
    assert folder is not None
    assert folder.parent == tmp_path
    assert prepared.output == str(folder / "my train.pt.trace.json.gz")
    assert S.prepare_output(prepared, tmp_path) == (prepared, None)


def test_run_records_list_and_delete(tmp_path: Path) -> None:
    older, _ = S.prepare_output(RunSpec("cprofile", "/a.py", ("1",)), tmp_path)
    rec_a = RunRecord.start(older, Path(str(older.output)).parent)
    rec_a.started -= 10
    rec_a.finish(S.STATUS_FAILED, 3)
    newer, _ = S.prepare_output(RunSpec("memory", "/b.py"), tmp_path)
    rec_b = RunRecord.start(newer, Path(str(newer.output)).parent)
    (tmp_path / "junk").mkdir()  # a folder without run.json is not a run
    runs = S.list_runs(tmp_path)
    assert [r.script for r in runs] == ["/b.py", "/a.py"]
    assert (runs[1].status, runs[1].exit_code, runs[1].args) == ("failed", 3, ["1"])
    assert runs[0].status == "running"
    assert runs[0].ended is None
    assert RunSpec.from_dict(runs[1].spec) == older
    S.delete_run(rec_b, tmp_path)
    assert [r.script for r in S.list_runs(tmp_path)] == ["/a.py"]
    with pytest.raises(ValueError, match="not a run folder"):
        S.delete_run(RunRecord(str(tmp_path / "junk" / "x"), "cprofile", "", [], "", 0.0), tmp_path)
    assert S.list_runs(tmp_path / "absent") == []
