"""Pictures of fixed-size pixel tiles kept between frames, least recently used dropped first.

A view that pans redraws mostly what the frame before drew, shifted. When what a tile shows
depends only on the zoom (not on where the view starts), a tile drawn once can be put on
screen again at its new place for the cost of one image copy: that is how map viewers and
Perfetto keep panning smooth over more data than a frame could draw afresh. The tiles are
numpy images (0xAARRGGBB words, 0 = nothing drawn), keyed by what decides their pixels
(the zoom, the data's version, the tile's place); an `empty` tile is remembered as such so
it costs nothing to draw. The cache is bounded in bytes, so memory does not grow with how
far the user pans.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

TILE_W = 512  # device pixels: a 1600 px view is 4-5 tiles wide
TILE_H = 256
BUDGET_BYTES = 64 << 20  # ~128 full tiles: a few screens' worth at one zoom


class TileCache:
    """Tiles by key, least recently used dropped once their bytes pass `budget_bytes`.

    A tile is an image array or None (nothing drawn there). `clear` drops everything: the
    owner calls it when what the tiles show changes (highlight, data, placement)."""

    def __init__(self, budget_bytes: int = BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._tiles: OrderedDict[Hashable, np.ndarray | None] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self._tiles

    def __len__(self) -> int:
        return len(self._tiles)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, key: Hashable) -> np.ndarray | None:
        """The tile at `key` (None for an empty one), marked as just used. KeyError if absent."""
        tile = self._tiles[key]
        self._tiles.move_to_end(key)
        self.hits += 1
        return tile

    def put(self, key: Hashable, tile: np.ndarray | None) -> None:
        """Keep `tile` (None: nothing drawn there), dropping the least recently used over budget."""
        old = self._tiles.pop(key, None)
        if old is not None:
            self._bytes -= old.nbytes
        self._tiles[key] = tile
        self.misses += 1
        if tile is not None:
            self._bytes += tile.nbytes
        while self._bytes > self.budget_bytes and len(self._tiles) > 1:
            _key, dropped = self._tiles.popitem(last=False)
            if dropped is not None:
                self._bytes -= dropped.nbytes

    def of_zoom(self, zoom: Hashable) -> dict[Hashable, np.ndarray | None]:
        """The tiles kept for `zoom`, by place (keys are (zoom, place) pairs)."""
        return {
            key[1]: tile
            for key, tile in self._tiles.items()
            if isinstance(key, tuple) and len(key) == 2 and key[0] == zoom
        }

    def clear(self) -> None:
        self._tiles.clear()
        self._bytes = 0


__all__ = ["BUDGET_BYTES", "TILE_H", "TILE_W", "TileCache"]
