"""A trace whose parse would take much of the memory available is parsed apart: the window's
load runs it in a child process, whose columns go straight into the cache's entry (written
once) and are mapped back from disk; with memory to spare it stays in the window's process."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.layout import timeline_layout
from perfview.core.model import Bundle
from perfview.loaders import LoadOptions, Where, limits, load, service, trace
from perfview.store import artifacts, layout_entries, overview_entries, parsed_columns
from tests.conftest import sample
from tests.loaders.cache_setup import use_cache_dir
from tests.loaders.test_cache import NCCL, assert_same
from tests.loaders.test_layout_cache import assert_same_layout

GIL_FREE = LoadOptions(where=Where.GIL_FREE, child_min_bytes=0)


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """The NCCL sample as plain JSON: the window's scanner would parse it in-process."""
    path = tmp_path / "nccl.json"
    path.write_bytes(gzip.decompress(sample(NCCL).read_bytes()))
    return path


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths sent to a child process, recorded."""
    sent: list[Path] = []
    real = service.child_load

    def child(path: Path, *args: Any, **kwargs: Any) -> tuple[Bundle, bool]:
        sent.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(service, "child_load", child)
    return sent


def short_of_memory(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory for the parse (it is not refused), but under APART_SHARE times what it needs."""
    needed = limits.needed_memory(path, "trace")
    monkeypatch.setenv(limits.ENV_LIMIT, str(2 * needed))
    assert limits.parse_apart(path, "trace")


def test_a_parse_short_of_memory_goes_apart_and_its_columns_into_the_cache_once(
    tmp_path: Path, plain: Path, children: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    use_cache_dir(tmp_path, monkeypatch, max_mb=100)
    short_of_memory(plain, monkeypatch)
    writes: list[Path] = []
    monkeypatch.setattr(parsed_columns, "put_later", lambda path, *_a, **_k: writes.append(path))
    bundle = load(plain, options=GIL_FREE)
    assert children == [plain]
    assert writes == []  # the child wrote the entry: the parent does not write it again
    assert (parsed_columns.cache_dir() / parsed_columns.key(plain)).is_dir()
    assert bundle.timeline is not None
    assert layout_entries.get(plain, bundle.timeline) is None  # no pages asked for: none made
    assert_same(trace.load(plain), bundle)
    assert bundle.timeline is not None
    ts = bundle.timeline.events["ts"].to_numpy()
    assert not ts.flags.owndata  # mapped from the entry's file, not a copy in the heap
    again = load(plain, options=GIL_FREE)  # a hit: no second child
    assert children == [plain]
    assert again.timeline is not None
    assert np.array_equal(again.timeline.events["ts"].to_numpy(), ts)


def test_a_parse_apart_for_pages_makes_their_entries_in_the_child(
    tmp_path: Path, plain: Path, children: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's open (`stored_pages`): the child also makes the Timeline's layout and the
    Overview's entries from the columns it cached, so the window reads them, mapped, instead
    of holding their temporaries; what it reads equals what it would have made."""
    use_cache_dir(tmp_path, monkeypatch, max_mb=100)
    short_of_memory(plain, monkeypatch)
    bundle = load(plain, options=dataclasses.replace(GIL_FREE, stored_pages=True))
    assert children == [plain]
    assert bundle.timeline is not None
    assert overview_entries.entry_for(plain).is_dir()
    made = layout_entries.get(plain, bundle.timeline)
    assert made is not None
    assert not made.event_row.flags.writeable  # read back from the child's entry
    assert_same_layout(timeline_layout.prepare_timeline(bundle.timeline), made)


def test_the_window_opens_the_childs_entries_without_checking_their_blocks_again(
    tmp_path: Path, plain: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child checksums every block as it writes; the window trusts those manifests for
    this session (`artifacts.vouch`), and checks any other, the same folder rewritten too."""
    monkeypatch.setattr(artifacts, "_VOUCHED", {})
    use_cache_dir(tmp_path, monkeypatch, max_mb=100)
    short_of_memory(plain, monkeypatch)
    bundle = load(plain, options=dataclasses.replace(GIL_FREE, stored_pages=True))
    assert bundle.timeline is not None
    entries = [
        parsed_columns.cache_dir() / parsed_columns.key(plain),
        layout_entries.entry_for(plain),
        overview_entries.entry_for(plain),
    ]
    for entry in entries:
        folder = artifacts.open_folder(entry)
        assert folder.vouched, entry.name
        assert not folder.verify, entry.name
    assert_same(trace.load(plain), bundle)  # read unchecked, and the same
    rewritten = artifacts.write_folder(entries[2], {}, {}, {"another": "manifest"})
    folder = artifacts.open_folder(rewritten)
    assert folder.verify
    assert not folder.vouched
    assert artifacts.open_folder(entries[0]).vouched  # the others stand


def test_with_the_cache_off_the_child_hands_back_a_private_folder(
    tmp_path: Path, plain: Path, children: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the private folder: seen, then gone
    monkeypatch.setattr("tempfile.tempdir", None)
    short_of_memory(plain, monkeypatch)
    bundle = load(plain, options=GIL_FREE)
    assert children == [plain]
    assert_same(trace.load(plain), bundle)
    assert not list(tmp_path.glob("perfview-child-*"))


def test_with_memory_to_spare_the_window_parses_here(
    plain: Path, children: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.loaders.trace.scan import parallel as trace_parallel

    trace_parallel.warm()  # until the scanner is compiled, every big trace goes to a child
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", "0")
    needed = limits.needed_memory(plain, "trace")
    monkeypatch.setenv(limits.ENV_LIMIT, str(limits.APART_SHARE * needed + 1))
    assert not limits.parse_apart(plain, "trace")
    assert load(plain, options=GIL_FREE).counts["slices"] > 0
    assert children == []
