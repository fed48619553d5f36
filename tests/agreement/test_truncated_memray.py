"""A truncated memray capture says what was lost.

memray writes its record count into the header; a copy cut at 30 % replays 4,191 of 305,406
records and used to load silently with a leak of 2.93 MB (the whole capture: 6.75 MB) and the
full 10.8 s duration. It now says how many records were replayed of how many, and its
duration ends at the last memory snapshot it replayed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfview.loaders import load
from tests.conftest import sample

CAPTURE = "memray/async_analysis_linux_memray.bin"


@pytest.mark.parametrize("fraction", [0.3, 0.8])
def test_truncated_capture_warns_and_cuts_the_duration(tmp_path: Path, fraction: float) -> None:
    whole = load(sample(CAPTURE))
    assert whole.memray is not None
    total = int(whole.memray.meta["records"])
    assert total == 305_406
    raw = sample(CAPTURE).read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(raw[: int(len(raw) * fraction)])
    bundle = load(cut)
    assert bundle.memray is not None
    replayed = int(bundle.memray.meta["records"])
    assert replayed < total
    notes = [w for w in bundle.warnings if "cut short" in w]
    assert len(notes) == 1
    assert f"{replayed:,} of {total:,} records" in notes[0]
    assert bundle.duration_ns < whole.duration_ns
    last = int(bundle.memray.memory["ts_ns"].max()) - int(bundle.memray.meta["start_ns"])
    assert bundle.duration_ns == last


def test_whole_capture_has_no_truncation_note() -> None:
    bundle = load(sample(CAPTURE))
    assert not [w for w in bundle.warnings if "cut short" in w]
