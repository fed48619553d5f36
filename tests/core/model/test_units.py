"""The one byte formatter and tick generator of every byte axis (core.model.units), and the
bandwidth unit of nccl-tests' columns: ticks at 1-2-5 steps of the unit shown."""

from __future__ import annotations

import math

import pytest

from perfview.core.model.units import (
    Unit,
    byte_step,
    byte_tick_labels,
    byte_ticks,
    byte_unit,
    column_unit,
    format_bandwidth,
    format_value,
)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def labels(lo: float, hi: float, count: int = 5) -> list[str]:
    return byte_tick_labels(byte_ticks(lo, hi, count), lo, hi, count)


@pytest.mark.parametrize(
    ("lo", "hi", "want"),
    [
        (0, 1.5 * MIB, ["0", "512 KiB", "1 MiB", "1.5 MiB"]),
        (0, MIB, ["0", "0.2 MiB", "0.4 MiB", "0.6 MiB", "0.8 MiB", "1 MiB"]),
        (0, 3 * GIB, ["0", "1 GiB", "2 GiB", "3 GiB"]),
        (0, 1000, ["0", "200 B", "400 B", "600 B", "800 B", "1000 B"]),
        (0, 700 * MIB, ["0", "200 MiB", "400 MiB", "600 MiB"]),
        (MIB, 3 * MIB, ["1 MiB", "1.5 MiB", "2 MiB", "2.5 MiB", "3 MiB"]),
        (0, 123_456, ["0", "50 KiB", "100 KiB"]),
    ],
)
def test_byte_ticks_step_by_1_2_5_of_the_unit_shown(lo: float, hi: float, want: list[str]) -> None:
    assert labels(lo, hi) == want


def test_no_decimal_step_is_written_in_binary_units() -> None:
    """The old axis ticked at decimal steps and printed them in binary units (977 KiB,
    1.91 MiB, 2.86 MiB): every tick here is a whole multiple of its step in the unit."""
    for hi in (999_999, 2_000_000, 3e6, 5e8, 7.3e9, 12_345, 1.01 * MIB):
        unit, _ = byte_unit(hi)
        step = byte_step(hi, unit)
        mantissa = step / unit / 10 ** math.floor(math.log10(step / unit))
        assert round(mantissa, 9) in (1.0, 2.0, 5.0), (hi, step)
        for text in labels(0, hi):
            assert "977" not in text
            assert "1.91" not in text
            assert "e" not in text.split()[0]


def test_ticks_cover_the_range_and_only_it() -> None:
    ticks = byte_ticks(0.3 * MIB, 2.7 * MIB)
    assert ticks[0] >= 0.3 * MIB
    assert ticks[-1] <= 2.7 * MIB
    assert len(ticks) >= 3
    assert byte_ticks(5, 5) == [5]
    assert byte_ticks(1, 0) == [1]


def test_bandwidth_reads_in_a_unit_not_an_exponent() -> None:
    assert format_bandwidth(9.94e-05) == "99.4 kB/s"
    assert format_bandwidth(7.18) == "7.18 GB/s"
    assert format_bandwidth(0.275) == "275 MB/s"
    assert format_bandwidth(float("nan")) == ""
    assert column_unit("busbw_gbps") is Unit.BANDWIDTH
    assert format_value(18.5, Unit.BANDWIDTH) == "18.5 GB/s"


def test_the_status_line_writes_byte_counts_in_their_unit() -> None:
    from perfview.core.pages.summary import count_text

    assert count_text("active_bytes", 2_297_283_072) == "2.14 GiB active"
    assert count_text("peak_bytes", 7_112_051) == "6.78 MiB peak"
    assert count_text("events", 4855) == "4,855 events"
    assert count_text("slices", 12, "3 async") == "12 slices (3 async)"
