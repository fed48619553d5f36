"""The only place where values are converted to human units (ns, bytes, counts)."""

from __future__ import annotations

import enum
import math


class Unit(enum.Enum):
    """What a number measures; decides how `format_value` renders it."""

    NS = "ns"
    BYTES = "bytes"
    COUNT = "count"
    PERCENT = "percent"
    BANDWIDTH = "GB/s"


_TIME_STEPS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_BYTE_STEPS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))

MIB = 1 << 20


def format_ns(ns: float, digits: int = 3) -> str:
    """Format a duration given in nanoseconds, e.g. 1_500_000 → '1.5 ms'."""
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return ""
    mag = abs(ns)
    for scale, suffix in _TIME_STEPS:
        if mag >= scale or scale == 1.0:
            value = ns / scale
            text = f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"
            return f"{text} {suffix}"
    return f"{ns} ns"  # pragma: no cover


def format_bytes(n: float, digits: int = 3) -> str:
    """Format a byte count with binary prefixes, e.g. 3 * 2**20 → '3 MiB'."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return ""
    mag = abs(n)
    for scale, suffix in _BYTE_STEPS:
        if mag >= scale:
            return f"{n / scale:.{digits}g} {suffix}"
    return f"{n:.0f} B"


def format_bandwidth(gb_per_s: float, digits: int = 3) -> str:
    """Format a rate given in GB/s (decimal, as nccl-tests prints busbw) in the unit that
    keeps it readable: 7.18 → '7.18 GB/s', 9.94e-05 → '99.4 kB/s' (was '9.94e-05')."""
    if gb_per_s is None or (isinstance(gb_per_s, float) and math.isnan(gb_per_s)):
        return ""
    value = gb_per_s * 1e9
    for scale, suffix in ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {suffix}"
    return f"{value:.{digits}g} B/s"


# The binary units a byte axis may be written in, smallest first.
_AXIS_UNITS = ((1, "B"), (1 << 10, "KiB"), (1 << 20, "MiB"), (1 << 30, "GiB"), (1 << 40, "TiB"))


def byte_unit(top: float) -> tuple[int, str]:
    """The binary unit a byte axis reaching `top` is written in: the largest not above it."""
    mag = abs(top)
    return next(((s, n) for s, n in reversed(_AXIS_UNITS) if mag >= s), _AXIS_UNITS[0])


def byte_step(span: float, unit: int, count: int = 5) -> float:
    """A tick step in bytes for `span` bytes: 1, 2 or 5 × a power of ten OF THE UNIT
    (0.5 MiB, 2 MiB, 200 KiB), never a decimal step written in binary units (977 KiB,
    1.91 MiB: the ticks of a decimal axis relabelled). At least one byte."""
    raw = abs(span) / max(count, 1) / unit
    if not raw > 0:
        return float(unit)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 5.0, 10.0) if m * power >= raw * 0.999)
    return max(step * unit, 1.0)


def byte_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Tick values (bytes) on a byte axis from `lo` to `hi`: multiples of `byte_step` in the
    unit of the axis's largest magnitude. Used by every byte axis of the window."""
    if not hi > lo:
        return [lo] if math.isfinite(lo) else []
    unit, _name = byte_unit(max(abs(lo), abs(hi)))
    step = byte_step(hi - lo, unit, count)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def format_byte_tick(value: float, step: float, unit: int) -> str:
    """A byte axis's tick label, in the axis's `unit` (`byte_unit` of its top) with no more
    decimals than the step needs ("0", "1.5 MiB", "0.2 MiB"); a tick under one unit that is a
    whole number of the next smaller unit is written in that ("512 KiB" for 0.5 MiB)."""
    if value == 0:
        return "0"
    units = dict(_AXIS_UNITS)
    if abs(value) < unit and unit > 1 and float(value / (unit >> 10)).is_integer():
        return f"{int(value / (unit >> 10))} {units[unit >> 10]}"
    decimals = max(0, -math.floor(math.log10(step / unit) + 1e-9)) if step < unit else 0
    text = f"{value / unit:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {units[unit]}"


def byte_tick_labels(values: list[float], lo: float, hi: float, count: int = 5) -> list[str]:
    """Labels of `byte_ticks(lo, hi, count)`'s values (or any multiples of its step)."""
    unit, _name = byte_unit(max(abs(lo), abs(hi)))
    step = byte_step(hi - lo, unit, count)
    return [format_byte_tick(v, step, unit) for v in values]


# Table columns say their unit in their name; every table in core follows this naming rule.
COLUMN_SUFFIX_UNITS = (
    ("_ns", Unit.NS),
    ("_bytes", Unit.BYTES),
    ("_pct", Unit.PERCENT),
    ("_gbps", Unit.BANDWIDTH),
)


def column_unit(column: str) -> Unit | None:
    """The unit a column holds, from its name suffix (None for text and plain numbers)."""
    for suffix, unit in COLUMN_SUFFIX_UNITS:
        if column.endswith(suffix):
            return unit
    return None


def format_value(value: float, unit: Unit) -> str:
    """Render `value` in `unit` for display in tables, tooltips and the CLI."""
    if unit is Unit.NS:
        return format_ns(value)
    if unit is Unit.BYTES:
        return format_bytes(value)
    if unit is Unit.PERCENT:
        return f"{value:.1f} %"
    if unit is Unit.BANDWIDTH:
        return format_bandwidth(value)
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.3g}"
    return f"{value:,}"
