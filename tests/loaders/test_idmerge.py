"""`trace.idmerge.merge_hashed` (the ranges' flow ids merged from their stored hashes) gives
exactly the codes of `scan.intern.intern_spans` (which hashes every span again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.loaders.trace import assemble, idmerge
from perfview.loaders.trace.read import read_bytes
from perfview.loaders.trace.scan import parallel as trace_parallel
from perfview.loaders.trace.scan.intern import intern_spans
from tests.conftest import sample


def _spans(words: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buf = np.frombuffer(b"".join(words), dtype=np.uint8)
    lens = np.array([len(w) for w in words], dtype=np.int64)
    starts = np.zeros(len(words), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    return buf, starts, lens


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_colliding_hashes_never_merge_different_ids(seed: int) -> None:
    """Hashes that collide (all equal, or a few values) only cost comparisons: the codes are
    intern_spans' (case ignored, first appearance order), with ids of equal length."""
    rng = np.random.default_rng(seed)
    alphabet = b"0123456789abcdefABCDEFxX"
    words = [
        bytes(alphabet[i] for i in rng.integers(0, len(alphabet), rng.integers(0, 12)))
        for _ in range(3000)
    ]
    words += [w.upper() for w in words[::3]] + [w.lower() for w in words[::5]]
    buf, starts, lens = _spans(words)
    want = intern_spans(buf, starts, lens, True)
    for hashes in (
        np.zeros(len(words), dtype=np.uint64),
        lens.astype(np.uint64) % np.uint64(3),
    ):
        got = idmerge.merge_hashed(buf, hashes, starts, lens)
        assert np.array_equal(got, want)


def test_empty_and_ready() -> None:
    buf, starts, lens = _spans([])
    assert len(idmerge.merge_hashed(buf, np.zeros(0, np.uint64), starts, lens)) == 0
    idmerge.warm()
    assert idmerge.ready()


def _checked_merges(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every merge the scanner path makes, compared with intern_spans as it runs."""
    seen: list[bool] = []
    real = idmerge.merge_hashed

    def both(buf: np.ndarray, hashes: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> Any:
        got = real(buf, hashes, starts, lens)
        seen.append(bool(np.array_equal(got, intern_spans(buf, starts, lens, True))))
        return got

    monkeypatch.setattr(assemble.idmerge, "merge_hashed", both)
    return seen


@pytest.mark.parametrize(
    "rel",
    [
        "kineto_gpu/hta_nccl_data.json.gz",
        "kineto_gpu/hta_sampled_rank-0.json.gz",
        "kineto_gpu/hta_mi250_rocm6.2.json.gz",
        "chrome_trace/catapult_flow.json",
    ],
)
def test_merge_equals_intern_spans_on_samples(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real flow ids over 3 scan ranges, with the hashes the scanner stored."""
    buf, _ = read_bytes(sample(rel))
    seen = _checked_merges(monkeypatch)
    assert trace_parallel.scan(buf, lambda *_: None, 0.0, 1.0, 3) is not None
    assert seen == [True]


def test_mixed_case_ids_across_ranges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same id written in other cases by other ranges gets one code."""
    events = [
        f'{{"ph":"{"sf"[k % 2]}","id":"0x{k % 50:X}{"ab" if k % 3 else "AB"}","cat":"c",'
        f'"name":"f","pid":1,"tid":1,"ts":{k},"bp":"e"}}'
        for k in range(3000)
    ]
    path = tmp_path / "ids.json"
    path.write_text('{"traceEvents":[' + ",".join(events) + "]}")
    buf, _ = read_bytes(path)
    seen = _checked_merges(monkeypatch)
    scanned = trace_parallel.scan(buf, lambda *_: None, 0.0, 1.0, 4)
    assert scanned is not None
    assert seen == [True]
    assert len(scanned.cols.ids.values) == 0 or int(scanned.cols.cat_all("fid").max()) == 49
