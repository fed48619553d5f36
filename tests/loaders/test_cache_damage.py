"""Nothing read back from the cache is trusted blindly: a real entry damaged in every way (bits
flipped in each file, each file truncated or deleted, the manifest garbled, an older layout,
an older perfview) still gives the numbers of a fresh parse, and says that it re-read the file;
a writer killed at any step leaves nothing a later load would trust, nor a temp folder."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import perfview
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.pages.summary import available_views, summarize
from perfview.loaders import load, trace
from perfview.store import artifacts, parsed_columns, temp_folders
from tests.loaders.cache_setup import sample_copy, use_cache_dir

MEMORY = "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"  # memory events, instants
COUNTERS = "chrome_trace/catapult_simple_trace.json"  # counters
FLOWS = "kineto_gpu/hta_mi250_rocm6.2.json.gz"  # flows, GPU kernels
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("PERFVIEW_CACHE_VERIFY", raising=False)
    return use_cache_dir(tmp_path, monkeypatch, max_mb=100)


def tables(bundle: Bundle) -> dict[str, pd.DataFrame]:
    """What the user reads: every summary table that has data, plus the counts."""
    out = {view: summarize(bundle, view) for view in available_views(bundle)}
    out["counts"] = pd.DataFrame([bundle.counts])
    return out


def assert_numbers(expected: dict[str, pd.DataFrame], bundle: Bundle) -> None:
    got = tables(bundle)
    assert list(got) == list(expected)
    for view, table in expected.items():
        pd.testing.assert_frame_equal(got[view], table, obj=view)


def _rewrite(file: Path, data: bytes) -> None:
    """A new file under the old name: the entry was copied with hard links."""
    file.unlink()
    file.write_bytes(data)


def flip(file: Path) -> None:
    """Flip a bit in every 4,099th byte (the issue's damage)."""
    data = bytearray(file.read_bytes())
    for i in range(0, len(data), 4099):
        data[i] ^= 0x10
    _rewrite(file, bytes(data))


def truncate(file: Path) -> None:
    data = file.read_bytes()
    _rewrite(file, data[: len(data) // 2])


def delete(file: Path) -> None:
    file.unlink()


def what(part: str) -> str:
    return "metadata" if part == artifacts.MANIFEST else f"column {part.replace('.', '/', 1)}"


def damaged_note(part: str) -> str:
    return f"{parsed_columns.DAMAGED} ({what(part)}); perfview re-read the file"


def assert_same_tables(fresh: Bundle, got: Bundle) -> None:
    """Every column of every table, the args and the counts: what every summary is made of."""
    assert fresh.timeline is not None
    assert got.timeline is not None
    for name in parsed_columns.TABLES:
        pd.testing.assert_frame_equal(getattr(got.timeline, name), getattr(fresh.timeline, name))
    assert bytes(got.timeline.args.blob[:]) == bytes(fresh.timeline.args.blob[:])
    assert np.array_equal(got.timeline.args.starts, fresh.timeline.args.starts)
    assert (got.counts, got.duration_ns) == (fresh.counts, fresh.duration_ns)


@pytest.mark.parametrize(
    ("rel", "only"),
    [(MEMORY, ""), (COUNTERS, "counters."), (FLOWS, "flows.")],
    ids=["all-files", "counters", "flows"],
)
def test_every_damage_to_every_file_rereads_the_file(
    rel: str, only: str, tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file of a real entry flipped, truncated, deleted in turn (the first sample has
    every file but those of its empty counters and flows tables; two more fill those in).
    Each time: the tables equal a fresh parse, the warning names the file. The summary
    tables are compared on the first and last case (they are functions of the tables)."""
    path = sample_copy(rel, tmp_path)
    fresh_bundle = trace.load(path)
    fresh = tables(fresh_bundle)
    parsed_columns.put(path, trace.load(path))
    entry = cache_env / parsed_columns.key(path)
    pristine = tmp_path / "pristine"
    shutil.copytree(entry, pristine)
    files = sorted(f.name for f in pristine.iterdir() if f.name.startswith(only))
    if not only:
        assert {artifacts.MANIFEST, "events.dur", "events.parent", "args.bin"} <= set(files)
    damages: list[Callable[[Path], None]] = [flip, truncate, delete]
    monkeypatch.setattr(parsed_columns, "put", lambda *_args: None)  # rebuilt: below
    cases = 0
    for name in files:
        for damage in damages:
            if damage is not delete and not (pristine / name).stat().st_size:
                continue  # an empty table's column has no byte to flip or cut
            shutil.rmtree(entry, ignore_errors=True)
            shutil.copytree(pristine, entry, copy_function=os.link)
            damage(entry / name)
            got = load(path)
            if name == "args.bin" and damage is flip:  # checked where read: see below
                got = args_damage_found_when_read(got, path)
            assert damaged_note(name) in got.warnings, f"{damage.__name__} {name}"
            assert not entry.exists()
            assert_same_tables(fresh_bundle, got)
            if cases == 0:
                assert_numbers(fresh, got)
            cases += 1
    assert cases >= 2 * len(files)
    assert_numbers(fresh, got)
    monkeypatch.undo()
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(cache_env))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")
    shutil.copytree(pristine, entry, copy_function=os.link)
    flip(entry / files[0])
    load(path)
    parsed_columns.flush()  # the re-parse was stored again, and is served without a note
    hit = parsed_columns.get(path)
    assert hit is not None
    assert not [w for w in hit.warnings if w.startswith(parsed_columns.DAMAGED)]
    assert_numbers(fresh, hit)


def args_damage_found_when_read(got: Bundle, path: Path) -> Bundle:
    """The args blob is checked block by block where it is read, not whole on every open:
    its flipped bits load without a note, reading them says the copy is damaged and drops
    it, and the next open parses the file again, saying why."""
    assert got.timeline is not None
    assert not [w for w in got.warnings if w.startswith(parsed_columns.DAMAGED)]
    with pytest.raises(LoadError, match=parsed_columns.DAMAGED):
        got.timeline.args.checked_blob()
    assert not (parsed_columns.cache_dir() / parsed_columns.key(path)).exists()
    return load(path)


def test_the_issues_flipped_duration_bits(tmp_path: Path, cache_env: Path) -> None:
    """The reported case: bits flipped in events/dur made `summary --view ops` print 1.17e18."""
    path = sample_copy(FLOWS, tmp_path)
    fresh = trace.load(path)
    parsed_columns.put(path, trace.load(path))
    flip(cache_env / parsed_columns.key(path) / "events.dur")
    got = load(path)
    assert got.warnings[-1] == (
        "the cached copy was damaged (column events/dur); perfview re-read the file"
    )
    pd.testing.assert_frame_equal(summarize(got, "ops"), summarize(fresh, "ops"))


def _summary(path: Path, cache_env: Path) -> tuple[dict[str, Any], str]:
    env = dict(os.environ, PERFVIEW_CACHE_DIR=str(cache_env), PERFVIEW_CACHE_MIN_BYTES="0")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    args = ["summary", str(path), "--view", "ops", "--format", "json"]
    proc = subprocess.run(
        [sys.executable, "-m", "perfview", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout), proc.stderr


def test_the_issue_end_to_end_with_the_cli(tmp_path: Path, cache_env: Path) -> None:
    """`perfview summary --view ops` writes the entry as it exits (a background write racing
    the interpreter's exit); bits flipped in its events/dur column are then reported, and the
    table is the fresh parse's, not a self time of 1e18 ns."""
    path = sample_copy(FLOWS, tmp_path)
    first, _ = _summary(path, cache_env)
    entry = cache_env / parsed_columns.key(path)
    assert (entry / artifacts.MANIFEST).is_file()
    flip(entry / "events.dur")
    second, stderr = _summary(path, cache_env)
    assert second["rows"] == first["rows"]
    assert second["warnings"] == [*first["warnings"], damaged_note("events.dur")]
    assert "events.dur" in stderr  # logged too
    third, _ = _summary(path, cache_env)  # rebuilt by the second run, served clean
    assert third == first


def test_damage_in_any_block_of_a_big_part_is_found(
    tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Big parts carry one checksum per block (checked on several threads): a flipped byte in
    a later block, or a block count that does not fit, is found like any other damage."""
    monkeypatch.setattr(artifacts, "BLOCK", 4096)  # the args blob spans dozens of blocks
    path = sample_copy(MEMORY, tmp_path)
    fresh_bundle = trace.load(path)
    parsed_columns.put(path, trace.load(path))
    entry = cache_env / parsed_columns.key(path)
    doc = json.loads((entry / artifacts.MANIFEST).read_bytes().partition(b"\n")[2])
    assert len(doc["parts"]["args.bin"]["xxh3"]) > 20
    assert doc["parts"]["args.bin"]["block"] == 4096
    monkeypatch.setattr(artifacts, "BLOCK", 1 << 20)  # reading uses the manifest's size
    hit = parsed_columns.get(path)
    assert hit is not None
    assert_same_tables(fresh_bundle, hit)
    blob = entry / "args.bin"
    data = bytearray(blob.read_bytes())
    data[20 * 4096 + 7] ^= 1
    _rewrite(blob, bytes(data))
    got = load(path)
    assert got.timeline is not None
    assert fresh_bundle.timeline is not None
    args = got.timeline.args
    block = args.starts // 4096
    whole = (args.lens > 0) & (block == (args.starts + args.lens - 1) // 4096)
    clean, bad = np.flatnonzero(whole & (block == 3))[0], np.flatnonzero(whole & (block == 20))[0]
    assert args.raw(int(clean)) == fresh_bundle.timeline.args.raw(int(clean))  # its block: fine
    with pytest.raises(LoadError, match=parsed_columns.DAMAGED):
        args.raw(int(bad))  # the damaged block, found as it is read
    got = load(path)
    assert damaged_note("args.bin") in got.warnings
    assert_same_tables(fresh_bundle, got)


@pytest.mark.parametrize(
    "garble",
    [
        lambda raw: raw.replace(b'"rows": ', b'"rows": 1', 1),  # valid JSON, other numbers
        lambda raw: raw[: len(raw) // 3],
        lambda raw: b"{" + raw,
        lambda raw: raw.replace(b"perfview-artifact", b"perfview-artefact", 1),
        lambda raw: b"",
    ],
    ids=["numbers", "cut", "prefix", "magic", "empty"],
)
def test_garbled_metadata_rereads_the_file(
    garble: Callable[[bytes], bytes], tmp_path: Path, cache_env: Path
) -> None:
    path = sample_copy(MEMORY, tmp_path)
    fresh = tables(trace.load(path))
    parsed_columns.put(path, trace.load(path))
    manifest = cache_env / parsed_columns.key(path) / artifacts.MANIFEST
    manifest.write_bytes(garble(manifest.read_bytes()))
    got = load(path)
    assert damaged_note(artifacts.MANIFEST) in got.warnings
    assert_numbers(fresh, got)


def test_entry_of_the_older_layout_is_not_read(tmp_path: Path, cache_env: Path) -> None:
    """An entry as the previous cache wrote it (meta.json + .npy files, `"version": 2`) found
    under the current key: not trusted, re-parsed, reported."""
    path = sample_copy(MEMORY, tmp_path)
    fresh_bundle = trace.load(path)
    fresh = tables(fresh_bundle)
    entry = cache_env / parsed_columns.key(path)
    entry.mkdir(parents=True)
    assert fresh_bundle.timeline is not None
    for col in fresh_bundle.timeline.events:
        series = fresh_bundle.timeline.events[col]
        values = series.cat.codes if isinstance(series.dtype, pd.CategoricalDtype) else series
        np.save(entry / f"events.{col}.npy", np.asarray(values))
    (entry / "meta.json").write_text(json.dumps({"version": 2, "tables": {}}))
    got = load(path)
    assert damaged_note(artifacts.MANIFEST) in got.warnings
    assert_numbers(fresh, got)


def test_entry_of_an_older_perfview_is_never_looked_up(
    tmp_path: Path, cache_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key holds perfview's version and the schema's and loaders' digest: an entry an
    older perfview wrote is simply not found (and ages out), without a warning."""
    path = sample_copy(MEMORY, tmp_path)
    fresh = tables(trace.load(path))
    monkeypatch.setattr(perfview, "__version__", "0.0.1")
    parsed_columns.build_id.cache_clear()
    old_key = parsed_columns.key(path)
    bundle = trace.load(path)
    bundle.counts["events"] += 1  # the old perfview counted differently
    parsed_columns.put(path, bundle)
    monkeypatch.undo()
    parsed_columns.build_id.cache_clear()
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(cache_env))
    monkeypatch.setenv("PERFVIEW_CACHE_MIN_BYTES", "0")
    assert parsed_columns.key(path) != old_key
    got = load(path)
    assert not [w for w in got.warnings if w.startswith(parsed_columns.DAMAGED)]
    assert_numbers(fresh, got)


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("events.dur", -5, "events.dur: negative"),
        ("events.parent", 10**6, "events.parent"),
        ("events.lane", 99, "events.lane: a row outside lanes"),
        ("events.name", -1, "events.name: a code outside its categories"),
    ],
)
def test_unchecked_damage_still_meets_the_invariants(
    column: str,
    value: int,
    why: str,
    tmp_path: Path,
    cache_env: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With checksums off (PERFVIEW_CACHE_VERIFY=0, benchmarks only), the schema's invariants
    still catch numbers no parse can give; the entry is dropped and the file re-read."""
    monkeypatch.setenv("PERFVIEW_CACHE_VERIFY", "0")
    path = sample_copy(MEMORY, tmp_path)
    fresh = tables(trace.load(path))
    parsed_columns.put(path, trace.load(path))
    file = cache_env / parsed_columns.key(path) / column
    manifest = json.loads(
        (cache_env / parsed_columns.key(path) / artifacts.MANIFEST).read_bytes().partition(b"\n")[2]
    )
    dtype = np.dtype(manifest["parts"][column]["dtype"])
    arr = np.fromfile(file, dtype=dtype)
    arr[len(arr) // 2] = value
    arr.tofile(file)
    got = load(path)
    note = next(w for w in got.warnings if w.startswith(parsed_columns.DAMAGED))
    assert "tables:" in note
    assert why in note
    assert_numbers(fresh, got)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash test forks a writer")
@pytest.mark.skipif(sys.platform == "win32", reason="flock-based sweep is POSIX")
def test_writer_killed_at_any_step_leaves_nothing_wrong(tmp_path: Path, cache_env: Path) -> None:
    """A child writing an entry is SIGKILLed at a write step (20 runs: the five around the
    publishing rename, and 15 seeded random ones among the opening, chunks and closing of every
    file), half of them replacing an entry, half writing a new one.
    The next start removes the dead writer's temp folder, and every load equals a fresh parse.
    Chunks are 4 KiB here so that kills land inside files."""
    path = sample_copy(MEMORY, tmp_path)
    bundle = trace.load(path)
    fresh = tables(bundle)
    steps: list[str] = []
    parsed_columns.put(path, bundle)
    artifacts.checkpoint, real = steps.append, artifacts.checkpoint
    old_chunk, artifacts.CHUNK = artifacts.CHUNK, 4096
    try:
        parsed_columns.put(
            path, bundle
        )  # a dry run counts the steps (replacing an entry: all of them)
        assert "moved old aside" in steps
        assert len(steps) > 60
        critical = ["closed manifest.json", "synced", "before publish", "moved old aside"]
        critical.append("published")
        assert set(critical) <= set(steps)
        rng = random.Random(19)
        chosen = critical + rng.sample([s for s in steps if s not in critical], 15)
        for run, step in enumerate(chosen):
            if run % 2:  # half the runs replace an entry, half write a new one
                shutil.rmtree(cache_env / parsed_columns.key(path), ignore_errors=True)
            _kill_writer_at(step, path, bundle)
            parsed_columns._SWEPT.clear()  # what a new process starts with
            hit = parsed_columns.get(path)  # the first look at the cache sweeps
            assert not [e for e in cache_env.iterdir() if e.name.startswith(".tmp-")], step
            got = hit or load(path)
            assert not [w for w in got.warnings if w.startswith(parsed_columns.DAMAGED)], step
            assert_numbers(fresh, got)
            parsed_columns.flush()
            assert not [e for e in cache_env.iterdir() if e.name.startswith(".tmp-")], step
    finally:
        artifacts.checkpoint, artifacts.CHUNK = real, old_chunk


def _kill_writer_at(step: str, path: Path, bundle: Bundle) -> None:
    pid = os.fork()
    if pid == 0:  # the writer: dies by SIGKILL when it reaches `step`
        try:

            def die(name: str) -> None:
                if name == step:
                    os.kill(os.getpid(), signal.SIGKILL)

            artifacts.checkpoint = die
            parsed_columns.put(path, bundle)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    # killed, or done: writing a new entry has no "moved old aside" step
    assert os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0


def test_sweep_spares_a_live_writer(tmp_path: Path) -> None:
    """A temp folder whose writer still runs (it holds the flock) is not swept."""
    if sys.platform == "win32":
        pytest.skip("flock is POSIX")
    with temp_folders.locked_temp(tmp_path) as tmp:
        (tmp / "part").write_bytes(b"x")
        assert temp_folders.sweep(tmp_path) == 0
        assert tmp.exists()
    dead = tmp_path / ".tmp-dead"
    dead.mkdir()
    assert temp_folders.sweep(tmp_path) == 1
    assert not dead.exists()
