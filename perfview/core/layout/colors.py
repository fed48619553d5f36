"""Stable colours for names, and a diverging scale for diff views. Pure: no Qt.

A name must keep its colour across zooms, views and runs, so the palette index comes from a
stable hash of the name (crc32), never from Python's salted `hash()` or from the order in which
names appear. Colours are plain RGB tuples; `perfview.qt` turns them into brushes.
"""

from __future__ import annotations

import colorsys
import zlib
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

RGB = tuple[int, int, int]


def _make_palette(n: int) -> tuple[RGB, ...]:
    """`n` soft, distinct hues light enough for black label text.

    Hues step by the golden angle so neighbouring indexes differ strongly; lightness and
    saturation alternate a little so hues that land close together still separate.
    """
    out: list[RGB] = []
    for i in range(n):
        hue = (0.08 + i * 0.618033988749895) % 1.0
        light = (0.70, 0.76, 0.66)[i % 3]
        sat = (0.55, 0.45, 0.62)[i % 3]
        r, g, b = colorsys.hls_to_rgb(hue, light, sat)
        out.append((round(r * 255), round(g * 255), round(b * 255)))
    return tuple(out)


PALETTE: tuple[RGB, ...] = _make_palette(24)
"""The categorical palette: bucket `i` is drawn with `PALETTE[i]`."""

MUTED: tuple[RGB, ...] = tuple(
    (round(r * 0.35 + 200 * 0.65), round(g * 0.35 + 200 * 0.65), round(b * 0.35 + 200 * 0.65))
    for r, g, b in PALETTE
)
"""The same palette washed out towards grey: non-matching slices while a search is active."""


def palette_index(name: str, n: int = len(PALETTE)) -> int:
    """Palette bucket of `name`: the same for the same text in every run and process."""
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % n


def palette_indices(names: Iterable[str], n: int = len(PALETTE)) -> np.ndarray:
    """Buckets for many names (int32). Hashes each distinct name once."""
    cat = pd.Categorical(list(names) if not isinstance(names, pd.Categorical) else names)
    return bucket_codes(cat, n)


def bucket_codes(
    cat: pd.Categorical | pd.Series, n: int = len(PALETTE), dtype: type = np.int32
) -> np.ndarray:
    """Buckets for a categorical column: hash the categories, then index by the codes.

    This is the fast path for millions of events: only the distinct names are hashed.
    Missing values (code -1) get bucket 0. `dtype`: np.uint8 for a big timeline's level 0.
    """
    if isinstance(cat, pd.Series):
        cat = pd.Categorical(cat)
    return category_buckets(np.asarray(cat.categories), np.asarray(cat.codes), n, dtype)


def category_buckets(
    categories: np.ndarray, codes: np.ndarray, n: int = len(PALETTE), dtype: type = np.int32
) -> np.ndarray:
    """`bucket_codes` from the distinct names and the codes into them, in one gather of the
    codes as they are (a trace's int16 codes: no int64 copy, no clipped copy)."""
    per_category: np.ndarray = np.fromiter(
        (palette_index(str(c), n) for c in categories), dtype=dtype, count=len(categories)
    )
    # one more entry, bucket 0, at the end: a missing value's code -1 reads it
    table = np.append(per_category, np.zeros(1, dtype=dtype))
    out: np.ndarray = table[codes]
    return out


def diverging_palette(steps: int = 11) -> tuple[RGB, ...]:
    """Blue (faster / smaller) → light grey → red (slower / larger), `steps` colours, odd."""
    if steps < 3 or steps % 2 == 0:
        raise ValueError("steps must be an odd number ≥ 3")
    half = steps // 2
    blue, grey, red = (59, 110, 200), (225, 225, 225), (205, 60, 50)
    out: list[RGB] = []
    for i in range(steps):
        t = (i - half) / half  # -1 … 1
        end = blue if t < 0 else red
        a = abs(t)
        r, g, b = (round(lo + (hi - lo) * a) for lo, hi in zip(grey, end, strict=True))
        out.append((r, g, b))
    return tuple(out)


def diverging_buckets(
    values: Sequence[float] | np.ndarray, limit: float, steps: int = 11
) -> np.ndarray:
    """Map signed deltas to buckets of `diverging_palette(steps)`; 0 → the middle (grey).

    `limit` is the magnitude that saturates (e.g. the largest |delta| worth showing); values
    beyond it clamp to the end colours. NaN maps to the middle.
    """
    v = np.asarray(values, dtype=np.float64)
    half = steps // 2
    if limit <= 0:
        return np.full(len(v), half, dtype=np.int32)
    scaled = np.nan_to_num(v / limit, nan=0.0, posinf=1.0, neginf=-1.0)
    idx = np.rint(np.clip(scaled, -1.0, 1.0) * half).astype(np.int32) + half
    return idx


__all__ = [
    "MUTED",
    "PALETTE",
    "RGB",
    "bucket_codes",
    "category_buckets",
    "diverging_buckets",
    "diverging_palette",
    "palette_index",
    "palette_indices",
]
