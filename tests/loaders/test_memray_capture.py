"""memray captures: a real recording of a script with known allocations, the real samples,
and the header reader that works without memray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from perfview.core.analysis import memray_views
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import noop
from perfview.core.pages import summary
from perfview.loaders import FRESH, detect, load
from perfview.loaders import memray as memray_capture
from perfview.loaders.memray import header as memray_header
from perfview.loaders.memray.isolated import read_isolated
from tests.conftest import sample

MIB = 1 << 20
SCRIPT = """\
import builtins

MIB = 1 << 20
builtins._perfview_leak = bytearray(48 * MIB)  # outlives the script: never freed while tracked
tmp = bytearray(96 * MIB)
del tmp
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    folder = tmp_path_factory.mktemp("memray")
    script = folder / "alloc.py"
    script.write_text(SCRIPT)
    out = folder / "unknown"  # a neutral name: detected by content
    subprocess.run(
        [sys.executable, "-m", "memray", "run", "-q", "-o", str(out), str(script)],
        check=True,
        timeout=120,
        cwd=folder,
    )
    return out


def test_round_trip_peak_and_leak(recording: Path, tmp_path: Path) -> None:
    bundle = load(recording)
    assert bundle.format == "memray"
    peak, leaked = bundle.counts["peak_bytes"], bundle.counts["leaked_bytes"]
    assert abs(peak - 144 * MIB) / (144 * MIB) < 0.01
    assert abs(leaked - 48 * MIB) / (48 * MIB) < 0.01
    stats = tmp_path / "stats.json"
    subprocess.run(
        [sys.executable, "-m", "memray", "stats", "--json", "-f", "-o", str(stats), str(recording)],
        check=True,
        timeout=120,
        capture_output=True,
    )
    assert peak == json.loads(stats.read_text())["metadata"]["peak_memory"]
    allocations = summary.summarize(bundle, "allocations")
    assert int(allocations["size_bytes"].sum()) == peak
    assert allocations["location"].iloc[0].endswith("alloc.py:5)")
    leaks = summary.summarize(bundle, "leaks")
    assert leaks["location"].iloc[0].endswith("alloc.py:4)")
    assert bundle.counts["threads"] == 1
    assert bundle.counts["records"] > 0
    tree = bundle.tree
    assert tree is not None
    assert tree.metrics["total_ns"][0] == peak
    top = int(tree.children(0)[0])  # memray's and runpy's launcher frames are left out
    assert tree.name(top) == "<module>"
    assert str(tree.frames["file"].iat[int(tree.frame[top])]).endswith("alloc.py")
    cap = bundle.memray
    assert cap is not None
    everything = memray_views.range_sites(cap, -1, 10**9)
    assert int(everything["size_bytes"].sum()) >= 144 * MIB


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        (
            "async_analysis_linux_memray.bin",
            {"records": 305_406, "threads": 5, "peak_bytes": 7_112_051},
        ),
        (
            "web_analyzer_py314_memray_output.bin",
            {"records": 65_879, "peak_bytes": 9_894_286},
        ),
    ],
)
def test_real_samples(name: str, counts: dict[str, int]) -> None:
    path = sample(f"memray/{name}")
    head = path.read_bytes()[:65536]
    assert memray_header.header_version(head) == 12
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    bundle = load(path)
    for key, value in counts.items():
        assert bundle.counts[key] == value
    assert len(summary.summarize(bundle, "timeline")) > 300
    assert len(summary.summarize(bundle, "leaks")) > 0


def test_without_memray_reads_it_itself(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = sample("memray/web_analyzer_py314_memray_output.bin")
    neutral = tmp_path / "unknown"
    neutral.write_bytes(path.read_bytes())
    assert detect(neutral) is memray_capture  # sniffed without memray: own LZ4 head decoder
    monkeypatch.setitem(sys.modules, "memray", None)  # import memray → ImportError
    bundle = load(neutral)  # format 12: perfview's own reader of the record stream
    assert bundle.counts["peak_bytes"] == 9_894_286
    neutral.write_bytes(b"memray\x00" + (14).to_bytes(4, "little") + bytes(200))
    with pytest.raises(LoadError, match=r"format version 14.*perfview\[memray\]"):
        load(neutral)


def test_lz4_prefix_decoder_overlapping_match() -> None:
    # token: 1 literal 'a', match length 4+3=7 at offset 1 → 'aaaaaaaa'
    block = bytes([0x13]) + b"a" + bytes([1, 0]) + bytes([0x10]) + b"b"
    assert memray_header.lz4_block_prefix(block, 100) == b"aaaaaaaa" + b"b"
    assert memray_header.header_version(b"memray\x00" + (13).to_bytes(4, "little")) == 13
    assert memray_header.header_version(b"\x04\x22\x4d\x18garbage") is None


def test_other_format_version_names_the_writer(tmp_path: Path) -> None:
    pytest.importorskip("memray", reason="memray is the optional extra perfview[memray]")
    path = tmp_path / "future.bin"
    path.write_bytes(b"memray\x00" + (8).to_bytes(4, "little") + bytes(200))
    # 8 (memray before 1.5): neither perfview's reader nor the installed memray reads it
    with pytest.raises(LoadError, match=r"format version 8"):
        load(path)


def _die_as_a_native_crash(path: Path) -> None:
    """What memray's reader does on some damaged captures: the process dies by a signal."""
    os.kill(os.getpid(), signal.SIGSEGV)


def test_a_reader_that_crashes_is_one_sentence_and_this_process_lives_on(tmp_path: Path) -> None:
    """The child-process reader's promise, made deterministic: whatever kills the child
    (here a real SIGSEGV), the parent gets a LoadError that says so."""
    path = tmp_path / "capture.bin"
    path.write_bytes(b"memray")
    with pytest.raises(LoadError, match=r"memray's reader crashed on it.*exit status -11"):
        read_isolated(_die_as_a_native_crash, path, noop)


def test_a_damaged_capture_is_a_sentence_or_a_result(data_dir: Path) -> None:
    """v12_aggregated_damaged.bin is v12_aggregated.bin with bytes flipped (found by
    scripts/probes/fuzz_loaders.py). memray's native reader dies on it on this machine and
    reads garbage without dying on others (what a damaged pointer hits is chance), so the test
    pins what perfview owes either way: one sentence, or a bundle, and this process lives on."""
    pytest.importorskip("memray")
    path = data_dir / "memray" / "v12_aggregated_damaged.bin"
    outcome: str
    try:
        outcome = load(path, options=FRESH).format
    except LoadError as exc:
        outcome = str(exc)
    assert outcome == "memray" or outcome.startswith("memray")
    assert "\n" not in outcome
    assert "Traceback" not in outcome
