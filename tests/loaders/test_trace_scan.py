"""The compiled scanner path (`trace.scan`) against the general msgspec path (`trace.general`).

Both must build identical bundles: on every real sample, on hand-written traces full of edge
cases, with any number of threads (including splits whose guessed boundaries fall inside
strings and nested args), and when odd input sends the scanner back to the general path.
"""

from __future__ import annotations

import gzip
import json
import mmap
import threading
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from perfview.core.model import Bundle
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.loaders import trace
from perfview.loaders.trace.numbers import parse_decimal
from perfview.loaders.trace.read import anonymous_map, read_bytes
from perfview.loaders.trace.scan import args as scan_args
from perfview.loaders.trace.scan import batches as scan_batches
from perfview.loaders.trace.scan import digits, tokens
from perfview.loaders.trace.scan import parallel as trace_parallel
from tests.conftest import sample
from tests.loaders.test_chrome_trace import TRACE_SAMPLES, _same_bundles

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "torch_cpu_small.pt.trace.json.gz"


def _load(path: Path, scanner: bool) -> Bundle:
    return trace.load(path, compiled=scanner)


def _both(path: Path) -> Bundle:
    """Load on both paths, check they agree, return the scanner's bundle."""
    fast = _load(path, True)
    _same_bundles(fast, _load(path, False))
    return fast


def _scanned(path: Path, threads: int | None = None) -> trace_parallel.Scanned | None:
    buf, _ = read_bytes(path)
    return trace_parallel.scan(buf, lambda *_: None, 0.0, 1.0, threads)


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_scanner_equals_general_path_on_samples(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = sample(rel)
    assert _scanned(path) is not None, "a real trace should not need the general path"
    _both(path)


def test_scanner_equals_general_path_on_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _scanned(FIXTURE) is not None
    bundle = _both(FIXTURE)
    assert bundle.timeline is not None
    assert len(bundle.timeline.events) > 100


# ----------------------------------------------------------------------------- edge cases

EDGE_EVENTS: list[dict[str, Any] | str] = [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python \u00e9"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": "7", "args": {"name": "main"}},
    {
        "ph": "X",
        "name": 'quo"te\\back\nnew',
        "cat": "cpu_op",
        "pid": 1,
        "tid": 7,
        "ts": 1.23449,
        "dur": 2.0005,
        "args": {"External id": 5, "Input Dims": [[1, 2], []], "s": "},{"},
    },
    {
        "ph": "X",
        "name": "caf\u00e9 \u4e2d\u6587 \U0001f600",
        "cat": None,
        "pid": 1,
        "tid": 7,
        "ts": 10,
        "dur": 1,
        "args": {"external id": 6, "Input dims": [[3]], "correlation": None},
    },
    {"ph": "X", "name": None, "pid": "worker", "tid": "io", "ts": -0.0005, "dur": 0},
    {"ph": "X", "name": "no-tid", "ts": 12.5, "dur": 1.5, "args": {}},
    {
        "ph": "X",
        "name": "nested",
        "pid": 1,
        "tid": 7,
        "ts": 20,
        "dur": 3,
        "args": {
            "list": [{"a": 1}, {"b": [1, 2, {"c": "},{"}]}],
            "t": True,
            "f": False,
            "n": None,
            "e": 1.5e-3,
            "neg": -12,
            "esc": '\\u00e9\t"',
            "correlation": 77,
        },
    },
    {"ph": "B", "name": "b", "pid": 1, "tid": 8, "ts": 30},
    {"ph": "E", "pid": 1, "tid": 8, "ts": 35},
    {"ph": "b", "name": "async", "cat": "c", "pid": 1, "tid": 8, "ts": 31, "id": "0xAB"},
    {"ph": "e", "name": "async", "cat": "c", "pid": 1, "tid": 8, "ts": 33, "id": "0xab"},
    {
        "ph": "b",
        "name": "async2",
        "cat": "c",
        "pid": 1,
        "tid": 8,
        "ts": 31,
        "id2": {"local": "0x1"},
    },
    {
        "ph": "e",
        "name": "async2",
        "cat": "c",
        "pid": 1,
        "tid": 8,
        "ts": 34,
        "id2": {"local": "0x1"},
    },
    {"ph": "s", "name": "flow", "cat": "ac2g", "pid": 1, "tid": 7, "ts": 1.3, "id": 99},
    {"ph": "f", "name": "flow", "cat": "ac2g", "pid": 1, "tid": 8, "ts": 30.5, "id": 99, "bp": "e"},
    {"ph": "i", "name": "mark", "pid": 1, "tid": 7, "ts": 21, "s": "p"},
    {"ph": "I", "name": "glob", "pid": 1, "tid": 7, "ts": 22, "s": "g"},
    {"ph": "n", "name": "inst", "pid": 1, "tid": 7, "ts": 23, "s": "\u00e9"},
    {"ph": "C", "name": "ctr", "pid": 1, "ts": 5, "args": {"a": 1, "b": 2.5, "c": "x"}},
    {
        "ph": "i",
        "name": "[memory]",
        "pid": 1,
        "tid": 7,
        "ts": 6,
        "s": "t",
        "args": {
            "Device Type": 1,
            "Device Id": 0,
            "Addr": 140000000000,
            "Bytes": -512,
            "Total Allocated": 1024,
            "Total Reserved": 2048,
        },
    },
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 7, "ts": 7, "args": {"Bytes": 8}},
    {
        "ph": "i",
        "name": "[OutOfMemory]",
        "pid": 1,
        "tid": 7,
        "ts": 8,
        "args": {"Device Type": 1, "Device Id": None, "Bytes": 1 << 40},
    },
    {"ph": "X", "name": "epoch", "pid": 2, "tid": 1, "ts": 1712195495519695.8765, "dur": 0.001},
    {"ph": "X", "name": "null-times", "pid": 2, "tid": 1, "ts": None, "dur": None},
    {"ph": "Z", "name": "unknown phase", "pid": 2, "tid": 1, "ts": 3},
    {"ph": "XX", "name": "two letters", "pid": 2, "tid": 1, "ts": 3},
    {"ph": None, "name": "null phase", "pid": 2, "tid": 1, "ts": 3},
    {"name": "no phase", "pid": 2, "tid": 1, "ts": 3},
    {},
]


def _write(tmp_path: Path, events: list[Any], *, name: str = "t.json", top: bool = True,
           indent: int | None = None, prefix: bytes = b"") -> Path:  # fmt: skip
    body: Any = {"schemaVersion": 1, "traceEvents": events, "traceName": "x"} if top else events
    path = tmp_path / name
    path.write_bytes(prefix + json.dumps(body, indent=indent, ensure_ascii=False).encode())
    return path


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "indented"])
@pytest.mark.parametrize("top", [True, False], ids=["object", "array"])
def test_edge_cases_scan_identically(
    tmp_path: Path, indent: int | None, top: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, EDGE_EVENTS, top=top, indent=indent)
    assert _scanned(path) is not None
    bundle = _both(path)
    tl = bundle.timeline
    assert tl is not None
    ev = tl.events
    row = ev[ev["name"] == 'quo"te\\back\nnew'].iloc[0]
    assert (int(row["ts"]) + tl.origin_ns, int(row["dur"])) == (1234, 2001)
    assert (int(row["ext_id"]), row["shape"]) == (5, "[[1, 2], []]")
    row = ev[ev["name"] == "caf\u00e9 \u4e2d\u6587 \U0001f600"].iloc[0]
    assert (int(row["ext_id"]), int(row["corr"]), row["shape"]) == (6, -1, "[[3]]")
    assert int(ev[ev["name"] == "nested"].iloc[0]["corr"]) == 77
    assert bundle.counts["memory_events"] == 3
    assert sorted(tl.memory["bytes"].tolist()) == [-512, 8, 1 << 40]


def test_bom_and_gzip_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, EDGE_EVENTS, prefix=b"\xef\xbb\xbf")
    assert _scanned(path) is not None
    _both(path)
    gz = tmp_path / "t.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    _both(gz)


def _many(n: int) -> list[dict[str, Any]]:
    """Events whose args hold `},{` inside strings and nested objects, to mislead splits."""
    return [
        {"ph": "X", "name": f"op{k % 5000}", "cat": "cpu_op", "pid": 1, "tid": k % 3,
         "ts": k * 10 + 0.5, "dur": 5,
         "args": {"note": "a},{b" * (k % 3), "deep": [{"x": k}, {"y": [{"z": "},{"}]}],
                  "External id": k}}
        for k in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_any_thread_count_gives_the_same_columns(tmp_path: Path, threads: int) -> None:
    path = _write(tmp_path, _many(3000))
    one = _scanned(path, 1)
    many = _scanned(path, threads)
    assert one is not None
    assert many is not None
    for name in ("ph", "name", "cat", "pid", "tid", "ts", "dur", "ext", "arg_starts", "arg_lens"):
        assert np.array_equal(one.cols.cat_all(name), many.cols.cat_all(name)), name
    assert one.cols.names.values == many.cols.names.values


def test_splits_inside_strings_are_detected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every guessed boundary lands inside a value: the range before carries on."""
    blob = "},{" * 2000
    events = [{"ph": "X", "name": "big", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
               "args": {"text": blob, "objs": [{"a": 1}] * 2000}},
              {"ph": "X", "name": "end", "pid": 1, "tid": 1, "ts": 3, "dur": 1}]  # fmt: skip
    path = _write(tmp_path, events)
    scanned = _scanned(path, 4)
    assert scanned is not None
    assert scanned.cols.n == 2
    _both(path)


@pytest.mark.parametrize("reserve", [True, False])
def test_small_batches_and_growing_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reserve: bool
) -> None:
    """Many FULL and GROW stops (tiny batches, > 4096 distinct names) change nothing, with
    the first range's rows written in place (`reserved_batch`) or in batches too."""
    monkeypatch.setattr(scan_batches, "BATCH_ROWS", 7)
    monkeypatch.setattr(scan_batches, "RESERVE", reserve)
    events = [
        {"ph": "X", "name": f"unique{k}", "cat": f"c{k % 50}", "pid": 1, "tid": k % 9,
         "ts": k, "dur": 0.5, "id": k}
        for k in range(6000)
    ]  # fmt: skip
    path = _write(tmp_path, events)
    scanned = _scanned(path, 2)
    assert scanned is not None
    assert len(scanned.cols.names.values) == 6000
    _both(path)


ODD = [
    '{"ph":"X","name":"q","pid":1,"tid":1,"ts":"5.5","dur":1}',  # quoted number
    '{"ph":"X","name":"e","pid":1,"tid":1,"ts":1e3,"dur":1}',  # exponent
    '{"ph":"X","name":"d","pid":1,"tid":1,"ts":1,"ts":2,"dur":1}',  # duplicate key
    '{"ph":"X","n\\u0061me":"k","pid":1,"tid":1,"ts":1,"dur":1}',  # escaped key
    '{"ph":"X","name":"f","pid":1.5,"tid":1,"ts":1,"dur":1}',  # float pid
    '{"ph":"X","name":"b","cat":true,"pid":1,"tid":1,"ts":1,"dur":1}',  # bool cat
    '{"ph":"\\u0058","name":"p","pid":1,"tid":1,"ts":1,"dur":1}',  # escaped phase
    '{"ph":"X","name":"c","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":1.5}}',
    '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":[1]}',  # args not an object
    '{"ph":"X","name":"big","pid":1,"tid":1,"ts":12345678901234567890,"dur":1}',
    '{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Bytes":"12"}}',
    "17",  # not an event object
]


@pytest.mark.parametrize("extra", ODD)
def test_odd_values_fall_back_and_agree(
    tmp_path: Path, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = '{"ph":"X","name":"plain","pid":1,"tid":1,"ts":0.5,"dur":2}'
    path = tmp_path / "odd.json"
    path.write_text('{"traceEvents":[' + plain + "," + extra + "]}")
    if '"[memory]"' not in extra:  # memory args fall back inside the scanner path
        assert _scanned(path) is None
    _both(path)


TRUNCATED = {
    "mid-event": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},{"ph":"X',
    "mid-args": '{"a":1,"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},'
    '{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1,"args":{"x":{"y":1}',
    "unclosed": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},\n',
    "unclosed-array": '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}\n\n',
}


@pytest.mark.parametrize("text", TRUNCATED.values(), ids=TRUNCATED.keys())
def test_truncated_files_scan_like_the_general_path(
    tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A profiler killed while writing leaves the array open: the scanner keeps every complete
    event and words the warning as the general path does."""
    path = tmp_path / "cut.json"
    path.write_text(text)
    assert _scanned(path) is not None
    bundle = _both(path)
    assert bundle.counts["slices"] == 1
    assert any("truncated" in w or "not closed" in w for w in bundle.warnings)


BROKEN = {
    "nothing-complete": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"du',
    "object-unclosed": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]',
    "trailing-comma": '[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},]',
    "garbage-after": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}]} x',
    "missing-comma": '{"traceEvents":[{"ph":"X" "name":"a","pid":1,"tid":1,"ts":1,"dur":1}]}',
    "bad-literal": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"z":nul}]}',
    "control-char": '{"traceEvents":[{"ph":"X","name":"a\x01","pid":1,"tid":1,"ts":1,"dur":1}]}',
    "leading-zero": '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":01,"dur":1}]}',
}


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_broken_json_goes_to_the_general_path(
    tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(text)
    assert _scanned(path) is None
    try:
        general = _load(path, False)
    except LoadError as exc:
        with pytest.raises(LoadError, match=str(exc)[:20]):
            _load(path, True)
        return
    _same_bundles(_load(path, True), general)


def test_invalid_utf8_gives_the_same_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes that are not UTF-8 in an event's name: one sentence, whichever msgspec decodes
    the event (before 0.23 it raised UnicodeDecodeError, since then a DecodeError)."""
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"traceEvents":[{"ph":"X","name":"a\xff","pid":1,"tid":1,"ts":1,"dur":1}]}')
    assert _scanned(path) is None
    with pytest.raises(LoadError, match="not UTF-8"):
        _load(path, True)


def test_cancel_stops_every_scan_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, _many(20000))
    buf, _ = read_bytes(path)
    calls = 0

    def progress(fraction: float, message: str) -> None:
        nonlocal calls
        calls += 1
        if any(t.name.startswith("perfview-scan") for t in threading.enumerate()):
            raise LoadCancelled()  # only once the scan threads run

    with pytest.raises(LoadCancelled):
        trace_parallel.scan(buf, progress, 0.0, 1.0, 2)
    assert calls >= 1
    assert not [t for t in threading.enumerate() if t.name.startswith("perfview-scan")]


def test_numbers_match_parse_decimal() -> None:
    """The scanner's exact decimal parsing equals `parse_decimal`, digit for digit."""
    rng = np.random.default_rng(7)
    texts = [f"{rng.integers(-(10**6), 10**15)}.{rng.integers(0, 10**9):09d}" for _ in range(2000)]
    texts += ["0", "-0", "0.0005", "-0.0005", "1.9995", "9.99999", "123", "4.5", "0.00049"]
    # every length of integer part (read 8 digits per step) and of fraction
    texts += [f"{'9876543210' * 2}"[:w] + (f".{'1234567895' * 2}"[: f + 1] if f else "")
              for w in range(1, 16) for f in range(0, 14)]  # fmt: skip
    for scale in (0, 3):
        expected, ok = parse_decimal("\n".join(texts).encode(), len(texts), scale)
        assert ok.all()
        for text, want in zip(texts, expected.tolist(), strict=True):
            for tail in (b" ", b"}" * 9, b""):  # the last: digits read one by one at the end
                buf = np.frombuffer(bytearray(text.encode() + tail), dtype=np.uint8)
                end, kind, value = digits.number(buf, 0, len(buf), scale)
                assert (end, value) == (len(text), want), text
                assert kind == (2 if "." in text else 1)


def test_numbers_the_general_path_must_judge() -> None:
    """Exponents, too many digits, leading zeros and cut numbers: the kinds that send a file
    to the general path, at every position in a word."""
    cases = {b"1e5": 3, b"-2.5E-3": 3, b"1" * 19: 4, b"1" * 25 + b".5": 4, b"01": 0,
             b"-": 0, b"1.": 0, b"1.e3": 0, b"-x": 0, b"9223372036854776": 4}  # fmt: skip
    for text, kind in cases.items():
        for pad in range(9):
            buf = np.frombuffer(bytearray(b" " * pad + text + b","), dtype=np.uint8)
            got = digits.number(buf, pad, len(buf), 3)[1]
            assert got == kind, (text, pad)


def test_numbers_stepped_over_end_and_judge_as_parsed_ones() -> None:
    """`skip_number` (a number only validated) ends where `number` does and gives the same
    kind, so a value the scanner does not keep still sends the same files to the general
    path: valid, decimal, exponent, too many digits, leading zeros, cut, at every offset."""
    rng = np.random.default_rng(5)
    texts = [f"{rng.integers(-(10**6), 10**15)}.{rng.integers(0, 10**9):09d}" for _ in range(300)]
    texts += [f"{'9876543210' * 3}"[:w] for w in range(1, 26)]
    texts += ["0", "-0", "-", "01", "-01", "1.", "1.e3", "-x", "1e5", "-2.5E-3", "1E+", "0.5e"]
    texts += ["1" * 19, "1" * 18, "1" * 25 + ".5", "123456789.123456789123", "-0.0"]
    for text in texts:
        for pad in range(9):
            for tail in (b",", b"}" * 9, b""):
                buf = np.frombuffer(bytearray(b" " * pad + text.encode() + tail), dtype=np.uint8)
                end, kind, _value = digits.number(buf, pad, len(buf), 0)
                assert digits.skip_number(buf, pad, len(buf)) == (end, kind), (text, pad, tail)


def test_strings_end_where_msgspec_says_at_every_offset() -> None:
    """`string` reads 8 (then 32) plain bytes per step: quotes, escapes, controls and
    non-ASCII bytes at every offset of a word (and strings cut anywhere) still end, or fail,
    exactly where msgspec's decoder does."""
    rng = np.random.default_rng(11)
    pieces = [b"a", b"Z", b" ", b"~", b"\\n", b'\\"', b"\\u00e9", b"\xc3\xa9", b"\xe2\x82\xac",
              b"\x01", b"\x7f", b"\xff", b"\\x", b"\xc3"]  # fmt: skip
    cases = []
    for length in range(0, 90):  # past 41: the 32-byte steps of `skip_plain` too
        for _ in range(12):
            body = b"".join(rng.choice(pieces[:4], size=length).tolist())
            if length and rng.random() < 0.8:  # one special piece somewhere
                k = int(rng.integers(0, length))
                body = body[:k] + pieces[int(rng.integers(4, len(pieces)))] + body[k + 1 :]
            cases.append(b'"' + body + b'"')
    for text in cases:
        for cut in (len(text), len(text) - 1):
            buf = np.frombuffer(bytearray(text[:cut] + b"   "), dtype=np.uint8)
            end, _flags = tokens.string(buf, 0, cut)
            try:
                msgspec.json.decode(text[:cut])
                want = cut
            except (msgspec.DecodeError, UnicodeDecodeError):
                want = -1
            assert end == want if want > 0 else end < 0, text[:cut]


def test_args_compaction_moves_overlapping_spans_in_place() -> None:
    """`compact` moves each kept span left onto bytes already moved (memmove), in order."""
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, size=200_000, dtype=np.uint8)
    cuts = np.sort(rng.choice(np.arange(1, len(data)), size=4000, replace=False))
    starts, ends = cuts[0::2], cuts[1::2]
    lens = ends - starts
    want = b"".join(bytes(data[a:b]) for a, b in zip(starts, ends, strict=True))
    buf = data.copy()
    total = scan_args.compact(buf, starts.astype(np.int64), lens.astype(np.int64))
    assert total == len(want)
    assert bytes(buf[:total]) == want


@pytest.mark.parametrize("seed", range(6))
def test_compiled_nesting_equals_interpreted(seed: int) -> None:
    """`core.nesting` gives the same answers compiled and interpreted, overlaps and ties
    included (a small trace runs it interpreted, a big one compiled)."""
    from perfview.core.analysis import intervals, nesting

    rng = np.random.default_rng(seed)
    n = 3000
    lane = rng.integers(0, 4, n)
    start = rng.integers(0, 400, n) * 10
    dur = rng.choice([0, 0, 5, 10, 20, 50, 200, 1000], n) + rng.integers(0, 3, n) * (seed % 2)
    end = start + dur
    order = intervals.slice_order(lane, start, end)
    lane, start, end = lane[order], start[order], end[order]
    sub = nesting.assign_rows(lane, start, end, compiled=True)
    assert np.array_equal(sub, nesting.assign_rows(lane, start, end, compiled=False))
    assert sub.max() > 0  # the random data does overlap
    split = lane * 100 + sub
    o2 = intervals.slice_order(split, start, end)
    depth, parent = nesting.nest(split[o2], start[o2], end[o2], compiled=True)
    want_depth, want_parent = nesting.nest(split[o2], start[o2], end[o2], compiled=False)
    assert np.array_equal(depth, want_depth)
    assert np.array_equal(parent, want_parent)


def test_parallel_read_gives_the_file_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from perfview.loaders.trace import read

    monkeypatch.setattr(read, "READ_PIECE", 4096)  # many pieces, several threads
    data = bytes(np.random.default_rng(3).integers(0, 256, 100_003, dtype=np.uint8))
    path = tmp_path / "blob.json"
    path.write_bytes(data)
    mm, warning = read.read_mapped(path)
    assert warning == ""
    assert bytes(mm[: len(data)]) == data
    assert bytes(mm[len(data) :]) == b" " * read.PAD


def test_gzip_streams_into_a_map(tmp_path: Path) -> None:
    """A gzip trace is inflated chunk by chunk into a growing map; a cut stream keeps what
    was inflated, with the general path's warning."""
    from perfview.loaders.trace import read

    text = json.dumps({"traceEvents": _many(3000)}).encode()
    whole = tmp_path / "t.json.gz"
    whole.write_bytes(gzip.compress(text))
    mm, warning = read.read_mapped(whole)
    assert (bytes(mm[: len(text)]), warning) == (text, "")
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 2])
    mm, warning = read.read_mapped(cut)
    general, general_warning = read_bytes(cut)
    assert bytes(mm) == bytes(general)
    assert warning == general_warning
    assert "ends early" in warning


def test_gzip_bigger_than_its_trailer_says_grows_its_map(tmp_path: Path) -> None:
    """Two gzip members: the trailer read for the size holds only the last one's, so the map
    must be replaced by a bigger one, not grown in place (a grown anonymous map crashed with
    SIGBUS on Python 3.11, found by the fuzzer)."""
    from perfview.loaders.trace import read

    text = json.dumps({"traceEvents": _many(2000)}).encode()
    raw = gzip.compress(text[:-10]) + gzip.compress(text[-10:])
    assert len(text) > 4 * len(raw)  # bigger than the fallback guess too
    path = tmp_path / "members.json.gz"
    path.write_bytes(raw)
    mm, warning = read.read_mapped(path)
    assert (bytes(mm[: len(text)]), warning) == (text, "")


def test_compiled_code_is_found_on_disk() -> None:
    """The window loads the scanner in-process only when numba's cache holds it (this suite
    has compiled it by now); otherwise it compiles it in a child, off the GUI's GIL."""
    trace_parallel.warm()
    assert trace_parallel.compiled()


def test_both_decoders_read_the_one_table_of_fields() -> None:
    """The scanner's key words and the general path's structs come from `fields`."""
    from perfview.loaders.trace import fields, general, kept
    from perfview.loaders.trace.scan import events
    from perfview.loaders.trace.scan.keys import table_words

    assert table_words(events.EV_KEYS) == [f.key for f in fields.EVENT]
    assert table_words(events.ARG_KEYS) == [f.key for f in fields.KINETO_ARGS]
    assert table_words(scan_args.MEM_KEYS) == [f.key for f in fields.MEMORY_ARGS]
    for struct in (general.TypedEvent, kept.Event):
        assert struct.__struct_encode_fields__ == tuple(f.key for f in fields.EVENT)
    for struct in (general.TypedArgs, general.KinetoArgs):
        assert struct.__struct_encode_fields__ == tuple(f.key for f in fields.KINETO_ARGS)


_COLUMNS = ("ph", "name", "cat", "pid", "tid", "ts", "ts_ok", "dur", "dur_ok", "corr", "ext",
            "shape", "fid", "bp_e", "scope", "arg_rows", "arg_lens", "arg_starts")  # fmt: skip
_INTERNERS = ("phs", "names", "cats", "keys", "shapes")


def _same_columns(one: trace_parallel.Scanned, many: trace_parallel.Scanned) -> None:
    for name in _COLUMNS:
        assert np.array_equal(one.cols.cat_all(name), many.cols.cat_all(name)), name
    for name in _INTERNERS:
        assert getattr(one.cols, name).values == getattr(many.cols, name).values, name


@pytest.mark.parametrize("threads", [2, 3, 5])
@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_ranges_give_the_same_columns_on_samples(rel: str, threads: int) -> None:
    """Codes are mapped in place range by range (assemble): every column and every table of
    values equals the one-range scan's, with absent pids/tids, shapes and flow ids."""
    path = sample(rel)
    one, many = _scanned(path, 1), _scanned(path, threads)
    assert one is not None
    assert many is not None
    _same_columns(one, many)


@pytest.mark.parametrize("threads", [2, 4])
def test_ranges_give_the_same_columns_on_edge_cases(
    tmp_path: Path, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Absent and null pid/tid values first met in a later range, ids in several ranges."""
    absent = [{"ph": "X", "name": "x", "ts": k, "dur": 1} for k in range(50)]
    ids = [{"ph": "s", "id": k % 7, "cat": "c", "name": "f", "pid": "p", "tid": None, "ts": k}
           for k in range(50)]  # fmt: skip
    mixed = [
        {"ph": "X", "name": "m", "ts": 1, "dur": 1, "pid": f"p{k}"}
        if k % 2
        else {"ph": "X", "name": "m", "ts": 1, "dur": 1, "tid": f"t{k}"}
        for k in range(20)
    ]
    events = _many(400) + ids + EDGE_EVENTS * 3 + absent + mixed + _many(400) + mixed + ids
    path = _write(tmp_path, events)
    one, many = _scanned(path, 1), _scanned(path, threads)
    assert one is not None
    assert many is not None
    _same_columns(one, many)
    with monkeypatch.context() as m:  # the whole load over `threads` ranges
        m.setattr(trace_parallel, "threads_for", lambda _n: threads)
        _both(path)


def test_the_text_past_the_args_is_given_back_in_pieces_and_the_args_stay() -> None:
    """`_release_tail` (before the map is resized, so the GUI thread never waits on one long
    GIL-holding call) frees only what lies past the args, from the next page on."""
    import mmap

    size, total = 9 * scan_args.POPULATE_STEP + 12_345, 3 * mmap.PAGESIZE + 17
    mm = anonymous_map(size)  # private, as the loader's text (shared memory is not freed)
    pattern = (np.arange(size) % 251).astype(np.uint8)
    mm[:] = pattern.tobytes()
    scan_args._release_tail(mm, total)
    page_end = 4 * mmap.PAGESIZE
    assert mm[:page_end] == pattern[:page_end].tobytes()  # the args' last page is kept whole
    assert mm[page_end:] == bytes(size - page_end)  # the rest was handed back (reads as zeros)
    mm.resize(total)
    assert mm[:] == pattern[:total].tobytes()


def test_a_reserved_batch_gives_back_only_the_rows_it_is_told() -> None:
    """`Room.release` frees the named rows' pages (they read as zeros after) and leaves
    every other row's values as they were."""
    room = scan_batches.reserved_batch(64 << 20)
    assert room is not None
    codes, i64, u8 = room.batch
    count = 100_000
    for arr in room.batch:
        arr[:, :count] = 7
    room.release([(1, 2), (2, 4)], count)
    page_items = mmap.PAGESIZE // 8
    assert not i64[2, page_items : count - page_items].any()  # whole pages of it: freed
    assert (i64[1, :count] == 7).all()
    assert (i64[3, :count] == 7).all()
    assert (u8[3, :count] == 7).all()
    assert (codes[:, :count] == 7).all()
    assert not u8[4, mmap.PAGESIZE : count - mmap.PAGESIZE].any()
