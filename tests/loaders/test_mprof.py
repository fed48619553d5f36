"""mprof .dat loader: counts from the lines themselves, appended runs, FUNC spans, peaks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfview import loaders
from perfview.core.model import schema
from perfview.core.model.errors import EmptyProfile
from perfview.loaders import mprof
from tests.conftest import sample

MIB = 2**20
DAT_SAMPLES = {
    # file: (runs, peak MiB as SOURCES.md gives it, duration s of the longest run)
    "mprof_dat/ctrml_mprofile.dat": (1, 838, 38.4),
    "mprof_dat/montepython_mprofile_20240116233958.dat": (1, 73, 7.8),
    "mprof_dat/seqsharp_mprof_children.dat": (5, 7647, 25.8),
}


def count_tags(path: Path) -> dict[str, int]:
    counts = {"CMDLINE": 0, "MEM": 0, "CHLD": 0, "FUNC": 0}
    for line in path.read_text().splitlines():
        tag = line.split(" ", 1)[0]
        if tag in counts:
            counts[tag] += 1
    return counts


@pytest.mark.parametrize("rel", sorted(DAT_SAMPLES))
def test_samples(rel: str) -> None:
    path = sample(rel)
    runs, peak_mib, duration_s = DAT_SAMPLES[rel]
    bundle = mprof.load(path)
    tags = count_tags(path)
    assert bundle.format == "mprof"
    assert bundle.counts == {
        "samples": tags["MEM"],
        "runs": runs,
        "children": tags["CHLD"],
        "functions": tags["FUNC"],
    }
    assert tags["CMDLINE"] == runs
    mem = bundle.memory
    assert mem is not None
    schema.validate(mem.samples, schema.SAMPLES)
    schema.validate(mem.children, schema.CHILD_SAMPLES)
    schema.validate(mem.spans, schema.SPANS)
    assert round(mem.samples["rss_bytes"].max() / MIB) == peak_mib
    assert bundle.duration_ns / 1e9 == pytest.approx(duration_s, abs=0.05)
    assert len(mem.cmdlines) == runs
    assert sorted(mem.samples["run"].unique().tolist()) == list(range(runs))
    assert not bundle.warnings


def test_seqsharp_runs_and_children() -> None:
    bundle = mprof.load(sample("mprof_dat/seqsharp_mprof_children.dat"))
    mem = bundle.memory
    assert mem is not None
    assert mem.samples.groupby("run").size().tolist() == [3, 13, 105, 14, 24]
    assert mem.children["run"].unique().tolist() == [4]
    assert sorted(mem.children["child"].unique().tolist()) == list(range(8))
    assert mem.children["rss_bytes"].max() == round(954.226562 * MIB)
    # Exact integer ns from the decimal text (no float rounding): "MEM 0.671875 1652117772.6332".
    assert mem.samples["ts_ns"].iat[0] == 1_652_117_772_633_200_000
    assert mem.samples["rss_bytes"].iat[0] == round(0.671875 * MIB)
    assert mem.cmdlines[0] == "/usr/bin/python3 hierarchical_EM.py configs/em/config1cl.json"


@pytest.mark.parametrize("rel", sorted(DAT_SAMPLES))
def test_samples_load_under_neutral_name(rel: str, tmp_path: Path) -> None:
    neutral = tmp_path / "unknown"
    shutil.copy(sample(rel), neutral)
    assert loaders.detect(neutral) is mprof
    assert loaders.load(neutral).counts["samples"] == count_tags(neutral)["MEM"]


def test_fixture_func_spans_follow_timestamps(data_dir: Path) -> None:
    path = data_dir / "mprofile_func.dat"
    bundle = loaders.load(path)
    tags = count_tags(path)
    assert bundle.format == "mprof"
    assert bundle.counts == {
        "samples": tags["MEM"],
        "runs": 3,
        "children": tags["CHLD"],
        "functions": tags["FUNC"],
    }
    mem = bundle.memory
    assert mem is not None
    spans = mem.spans
    # FUNC lines precede their run's CMDLINE in the file; each goes to the run it happened in.
    assert spans["run"].tolist() == [0, 0, 1, 1]
    assert spans["name"].tolist() == ["__main__.grow", "__main__.inner"] * 2
    assert spans["level"].tolist() == [0, 1, 0, 1]
    for run, group in spans.groupby("run"):
        ts = mem.samples.loc[mem.samples["run"] == run, "ts_ns"]
        assert (group["start_ns"] >= ts.min()).all()
        assert (group["end_ns"] <= ts.max()).all()
    assert (spans["mem_end"] >= spans["mem_start"]).all()
    # The -M run: two forked children, CHLD samples in run 2 only.
    assert mem.children["run"].unique().tolist() == [2]
    assert mem.children["child"].nunique() == 2
    assert mem.cmdlines[2].endswith("children.py")


def test_bad_lines_are_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "x.dat"
    path.write_text(
        "CMDLINE python a.py\nMEM 1.5 100.25\nMEM oops 100.5\nGARBAGE\n\n"
        "FUNC f 1.0 100.3\nMEM 2.0 100.75\n"
    )
    bundle = mprof.load(path)
    assert bundle.counts["samples"] == 2
    assert bundle.warnings == ["skipped 3 malformed line(s)"]
    mem = bundle.memory
    assert mem is not None
    assert mem.samples["ts_ns"].tolist() == [100_250_000_000, 100_750_000_000]
    assert mem.samples["rss_bytes"].tolist() == [int(1.5 * MIB), 2 * MIB]
    assert bundle.duration_ns == 500_000_000


def test_old_func_lines_without_level(tmp_path: Path) -> None:
    path = tmp_path / "old.dat"
    path.write_text("FUNC m.f 10.0 5.0 12.0 6.0\nCMDLINE p\nMEM 9 4.5\nMEM 13 6.5\n")
    mem = mprof.load(path).memory
    assert mem is not None
    assert mem.spans["level"].tolist() == [-1]
    assert mem.spans["mem_end"].tolist() == [12 * MIB]


def test_no_samples(tmp_path: Path) -> None:
    path = tmp_path / "empty.dat"
    path.write_text("CMDLINE python a.py\n")
    with pytest.raises(EmptyProfile, match="no memory samples"):
        mprof.load(path)


def test_sniff() -> None:
    assert mprof.sniff(b"CMDLINE python x.py\nMEM 1 2\n", Path("x"))
    assert mprof.sniff(b"FUNC a.b 1.0 2.0 3.0 4.0 0\n", Path("x"))
    assert not mprof.sniff(b"MEMORY report\n", Path("x"))
    assert not mprof.sniff(b"MEM usage is high\n", Path("x"))
    assert not mprof.sniff(b'{"traceEvents": []}', Path("x"))
