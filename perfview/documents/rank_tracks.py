"""One rank of a job expanded to its full tracks: the rank's slices laid out as the Timeline lays
out a trace, kept as drawing arrays only.

A job holds per-rank reductions, never all ranks' events (`perfview.jobs`). Expanding a rank in
the job timeline opens that rank's file as a document of its own (through the store, so a rank
opened before comes from the cache), lays its slices out with the Timeline's own code
(`prepare_timeline`: rows per thread and stream, the level-of-detail index), and keeps only
what drawing and naming need: the rectangle index, the slice names and the track labels. The
bundle (columns, args, tables) is let go as soon as the layout exists, so the window holds
~50 bytes per slice of each expanded rank, not its trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perfview.core.layout.flame import Rects
from perfview.core.layout.flame_cull import FlameIndex
from perfview.core.layout.timeline_layout import prepare_timeline
from perfview.core.model.errors import LoadError
from perfview.core.model.progress import Progress, noop
from perfview.documents.document import open_document

# Raw slices one expanded rank may merge per frame (the single trace's Timeline: 100k). A job
# draws many ranks in one frame: past this, a rank's frame is culled from its pre-merged
# levels of detail (bounded by pixels), never merged from its slices. The levels cost memory:
# for a rank of 160k slices, 0.16 of its rects more at 100k, 0.51 at 25k, 1.05 at 10k (64
# such ranks: +440 MB at 10k).
RANK_RAW_BUDGET = 25_000


@dataclass(frozen=True)
class RankTracks:
    """A rank's slices ready to draw. `index` rects are in the rank's own ns (relative to
    `origin_ns`, the absolute ns of the trace's time 0) on rows 0..rows-1; `codes[node]` is a
    slice's name in `names`; `labels` are (row, text) for each track."""

    rank: int
    origin_ns: int
    index: FlameIndex
    names: np.ndarray
    codes: np.ndarray
    rows: int
    labels: tuple[tuple[float, str], ...]

    @property
    def slices(self) -> int:
        return len(self.codes)

    def name_of(self, node: int) -> str:
        return str(self.names[self.codes[node]])

    def matching(self, text: str) -> np.ndarray:
        """Slices (nodes) whose name contains `text`, case-insensitive: the job timeline's
        search, over every expanded rank."""
        needle = text.casefold()
        hit = np.fromiter(
            (needle in str(n).casefold() for n in self.names), dtype=bool, count=len(self.names)
        )
        return np.flatnonzero(hit[self.codes]) if len(self.codes) else np.empty(0, np.int64)


def rank_tracks(rank: int, path: str | Path, progress: Progress = noop) -> RankTracks:
    """Open rank `rank`'s trace at `path` and lay out its tracks (any thread; LoadError with
    one sentence when the file cannot be opened, LoadCancelled when `progress` raises it)."""
    document = open_document(path, progress=progress)
    timeline = document.bundle.timeline
    if timeline is None or not len(timeline.events):
        raise LoadError(f"rank {rank}'s trace has no slices to draw")
    progress(0.9, f"laying out rank {rank}'s tracks")
    data = prepare_timeline(timeline, max_counters=0, build_levels=False)
    rows = int(data.tracks.total_rows)
    labels = tuple((y, text) for y, text in data.labels if y < rows)
    return RankTracks(
        rank, int(timeline.origin_ns), rank_index(data.index.rects), data.categories, data.codes,
        rows, labels,
    )  # fmt: skip


def rank_index(rects: Rects) -> FlameIndex:
    """A rank's rects (in (row, x0) order) indexed for a job's frame: `RANK_RAW_BUDGET`, and
    every level of detail built now, on the worker (`FlameIndex.build_levels`)."""
    index = FlameIndex(
        rects, raw_budget=RANK_RAW_BUDGET, direct_below=RANK_RAW_BUDGET // 2, presorted=True
    )
    index.build_levels()
    return index


__all__ = ["RankTracks", "rank_tracks"]
