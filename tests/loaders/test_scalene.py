"""Scalene JSON profiles: a real Scalene 2.4.0 profile loads under a neutral name, with every
line's and function's numbers equal to an independent read of the JSON; the Lines page shows
Scalene's columns; the tables and damaged files behave."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from perfview.core.analysis import scalene_tables
from perfview.core.model.errors import EmptyProfile, LoadError
from perfview.loaders import FRESH, detect, load
from perfview.loaders import scalene as scalene_loader
from tests.conftest import DATA

PROFILE = DATA / "scalene" / "multi_file.json"
MIB = 2.0**20


def test_loads_under_a_neutral_name_with_the_json_numbers(tmp_path: Path) -> None:
    path = tmp_path / "profile.dat"
    shutil.copyfile(PROFILE, path)
    assert detect(path) is scalene_loader
    bundle = load(path, options=FRESH)
    doc = json.loads(PROFILE.read_text())
    assert bundle.format == "scalene"
    assert bundle.lines is not None
    lines = bundle.lines.lines.set_index(["file", "line"])
    n_lines = n_functions = 0
    for file, data in doc["files"].items():
        for entry in data["lines"]:
            n_lines += 1
            row = lines.loc[(file, entry["lineno"])]
            assert row["content"] == entry["line"].rstrip("\n")
            assert row["cpu_python_pct"] == entry["n_cpu_percent_python"]
            assert row["cpu_native_pct"] == entry["n_cpu_percent_c"]
            assert row["cpu_system_pct"] == entry["n_sys_percent"]
            assert row["mem_peak_bytes"] == entry["n_peak_mb"] * MIB
            assert row["mem_avg_bytes"] == entry["n_avg_mb"] * MIB
            assert row["alloc_bytes"] == entry["n_malloc_mb"] * MIB
            assert row["copy_bytes_per_s"] == entry["n_copy_mb_s"] * MIB
            assert row["mallocs"] == entry["n_mallocs"]
            assert row["gpu_pct"] == entry["n_gpu_percent"]
        n_functions += len(data["functions"])
    assert bundle.counts["lines"] == n_lines == len(lines)
    assert bundle.counts["functions"] == n_functions
    assert bundle.counts["files"] == len(doc["files"])
    assert bundle.duration_ns == int(doc["elapsed_time_sec"] * 1e9)
    assert bundle.counts["peak_bytes"] == int(doc["max_footprint_mb"] * MIB)


def test_functions_table_is_scalenes_own() -> None:
    bundle = load(PROFILE, options=FRESH)
    assert bundle.lines is not None
    table = scalene_tables.functions_table(bundle.lines)
    doc = json.loads(PROFILE.read_text())
    want = {
        (file, f["line"]): f["n_cpu_percent_python"] + f["n_cpu_percent_c"] + f["n_sys_percent"]
        for file, data in doc["files"].items()
        for f in data["functions"]
    }
    got = dict(
        zip(
            zip(table["file"], table["function"], strict=False), table["cpu_total_pct"], strict=True
        )
    )
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value)
    assert list(table["cpu_total_pct"]) == sorted(table["cpu_total_pct"], reverse=True)


def test_lines_table_holds_the_active_lines_most_cpu_first() -> None:
    bundle = load(PROFILE, options=FRESH)
    assert bundle.lines is not None
    table = scalene_tables.lines_table(bundle.lines)
    doc = json.loads(PROFILE.read_text())
    keys = ("n_cpu_percent_python", "n_cpu_percent_c", "n_sys_percent", "n_malloc_mb",
            "n_peak_mb", "n_avg_mb", "n_gpu_percent", "n_mallocs", "n_copy_mb_s")  # fmt: skip
    active = sum(
        any(entry.get(k) for k in keys) for data in doc["files"].values() for entry in data["lines"]
    )
    assert len(table) == active
    cpu = table["cpu_total_pct"].to_numpy()
    assert np.all(cpu[:-1] >= cpu[1:])


def test_summary_prints_the_lines_view(capsys: pytest.CaptureFixture[str]) -> None:
    from perfview.cli import main

    assert main(["summary", str(PROFILE)]) == 0
    out = capsys.readouterr().out
    assert "a Scalene profile" in out
    assert "kept.append([i] * 10)" in out


def test_older_scalene_keys_and_missing_numbers_load(tmp_path: Path) -> None:
    """Scalene 1.x wrote `elapsed_time_sec` first and fewer per-line numbers: those are NaN."""
    doc = {
        "elapsed_time_sec": 2.0,
        "growth_rate": 0.0,
        "max_footprint_mb": 10.0,
        "files": {
            "prog.py": {
                "lines": [
                    {"lineno": 1, "line": "x = 1\n", "n_cpu_percent_python": 50.0},
                    {"lineno": 2, "line": "y = [0] * 9\n", "n_malloc_mb": 1.5},
                ],
                "functions": [],
                "percent_cpu_time": 50.0,
            }
        },
    }
    path = tmp_path / "old"
    path.write_text(json.dumps(doc))
    bundle = load(path, options=FRESH)
    assert bundle.lines is not None
    lines = bundle.lines.lines
    assert lines["cpu_python_pct"].tolist()[0] == 50.0
    assert np.isnan(lines["cpu_python_pct"].tolist()[1])
    assert lines["alloc_bytes"].tolist()[1] == 1.5 * MIB
    assert len(scalene_tables.functions_table(bundle.lines)) == 0


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"elapsed_time_sec": 1.0, "files": {}}, "no profiled lines"),
        ({"elapsed_time_sec": 1.0}, "no files object"),
        ({"elapsed_time_sec": 1.0, "files": {"a": {"lines": [{"line": "x"}]}}}, "line number"),
        ({"elapsed_time_sec": 1.0, "files": {"a": {"lines": [3]}}}, "not an object"),
    ],
)
def test_damaged_profiles_are_one_sentence(tmp_path: Path, doc: object, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises((LoadError, EmptyProfile), match=message) as info:
        load(path, options=FRESH)
    assert "\n" not in str(info.value)


def test_cut_file_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(PROFILE.read_bytes()[:50_000])
    with pytest.raises(LoadError, match="Scalene"):
        load(path, options=FRESH)
