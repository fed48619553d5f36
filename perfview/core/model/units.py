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


# Table columns say their unit in their name; every table in core follows this naming rule.
COLUMN_SUFFIX_UNITS = (("_ns", Unit.NS), ("_bytes", Unit.BYTES), ("_pct", Unit.PERCENT))


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
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.3g}"
    return f"{value:,}"
