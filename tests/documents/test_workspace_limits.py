"""A workspace listing more tabs than anyone opens is refused before any tab is read.

Found by fuzzing (`fuzz_loaders.py --binary`, seed 35, #2131): a 25 MB workspace of 100,000
tabs took over 20 s to read, and opening it would have opened 100,000 documents.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from perfview.core.model.errors import LoadError
from perfview.documents import workspace as ws

TAB = {"path": "a.prof", "view": "functions", "time_range": [10, 20]}


def _doc(n: int) -> str:
    return json.dumps({"format": ws.FORMAT, "version": 1, "current": 0, "tabs": [TAB] * n})


def test_a_workspace_of_100_000_tabs_is_refused_at_once() -> None:
    text = _doc(100_000)
    start = time.thread_time()
    with pytest.raises(LoadError) as info:
        ws.from_json(text, Path("/tmp"))
    assert time.thread_time() - start < 5.0
    assert str(info.value) == (
        "it lists 100,000 tabs; a workspace opens at most 1,000, so it was not written by perfview"
    )


def test_a_workspace_of_max_tabs_still_reads() -> None:
    assert len(ws.from_json(_doc(ws.MAX_TABS), Path("/tmp")).tabs) == ws.MAX_TABS
