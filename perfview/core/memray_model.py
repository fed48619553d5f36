"""memray captures (`memray run -o out.bin`), reduced to columns while they are read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


@dataclass
class MemrayCapture:
    """A memray capture as columns (filled by `perfview.loaders.memray_capture`)."""

    sites: pd.DataFrame  # one row per allocation stack: stack, size/count at peak, leaks
    frames: pd.DataFrame  # name, file, line
    stack_offsets: np.ndarray  # int64, n_stacks + 1
    stack_frames: np.ndarray  # int32 frame ids, innermost first
    memory: pd.DataFrame  # ts_ns, rss_bytes, heap_bytes (memory snapshots over time)
    threads: pd.DataFrame  # tid, name
    meta: dict[str, Any] = field(default_factory=dict)
