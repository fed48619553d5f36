"""Background cache writers yield to a busy GUI thread (`loaders.pacing`, `artifacts` pace)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfview.loaders import LoadOptions, artifacts, cache, load, pacing
from tests.loaders.cache_setup import sample_copy, use_cache_dir
from tests.loaders.test_cache import NCCL


class FakeTime:
    """A clock that moves only when the heartbeat sleeps; `beat_at` beats at that time."""

    def __init__(self) -> None:
        self.now = 100.0
        self.beat_at: float | None = None
        self.heart: pacing.Heartbeat | None = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.beat_at is not None and self.now >= self.beat_at and self.heart is not None:
            self.heart.beat()
            self.beat_at = None


def _heart() -> tuple[pacing.Heartbeat, FakeTime]:
    fake = FakeTime()
    heart = pacing.Heartbeat(fake.clock, fake.sleep)
    fake.heart = heart
    return heart, fake


def test_disarmed_or_recent_heartbeat_never_waits() -> None:
    heart, fake = _heart()
    fake.now += 10  # no window: nobody beats, and nobody should wait for it
    heart.pace()
    heart.arm()
    fake.now += pacing.LATE_S / 2
    heart.pace()
    assert heart.waited_s == 0.0


def test_late_heartbeat_holds_the_writer_until_the_next_beat() -> None:
    heart, fake = _heart()
    heart.arm()
    fake.now += 0.2  # the GUI thread has been busy for 200 ms
    fake.beat_at = fake.now + 0.03
    heart.pace()
    assert heart.waited_s == pytest.approx(0.03, abs=pacing.WAIT_STEP_S)
    assert not heart.late()


def test_a_window_that_stays_busy_only_delays_the_writer() -> None:
    heart, fake = _heart()
    heart.arm()
    fake.now += 5.0
    heart.pace()
    assert heart.waited_s == pytest.approx(pacing.MAX_WAIT_S, abs=pacing.WAIT_STEP_S)
    heart.disarm()  # the window closed: no more waiting at all
    heart.pace()
    assert heart.waited_s == pytest.approx(pacing.MAX_WAIT_S, abs=pacing.WAIT_STEP_S)


def test_write_folder_asks_before_every_step_and_block(tmp_path: Path) -> None:
    values = np.arange(5 * artifacts.STEP // 8, dtype=np.int64)  # 5 steps, 2 blocks of bytes
    asked: list[int] = []
    folder = artifacts.write_folder(tmp_path / "e", {"v": values}, {}, {}, lambda: asked.append(1))
    steps = -(-values.nbytes // artifacts.STEP)
    blocks = -(-values.nbytes // artifacts.BLOCK)
    assert len(asked) == steps + blocks
    assert np.array_equal(artifacts.open_folder(folder).array("v"), values)


def test_the_load_service_hands_the_pace_to_the_cache_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_cache_dir(tmp_path, monkeypatch, 512)
    path = sample_copy(NCCL, tmp_path)
    asked: list[int] = []
    load(path, options=LoadOptions(write_pace=lambda: asked.append(1)))
    cache.flush()
    assert asked
    assert cache.get(path) is not None
