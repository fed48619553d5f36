"""Hostile input: mutated real files only ever load or raise LoadError, the CLI never shows a
traceback, absurd values are refused inside the loaders, and files too big for memory are
refused before decoding. The fuzz cases come from scripts/probes/fuzz_loaders.py with a fixed seed
(the script runs 10,000+ cases; here a few hundred keep the suite fast)."""

from __future__ import annotations

import gzip
import importlib.util
import marshal
import re
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

from perfview import loaders
from perfview.core.model.errors import LoadError
from perfview.loaders import cprofile, limits, memory_profiler_text, mprof

ROOT = Path(__file__).resolve().parent.parent
SEED = 20260
CASES = 240  # fed to all four loaders and to detect's pick: 1,200 loader calls


def _fuzzer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "fuzz_loaders", ROOT / "scripts" / "probes" / "fuzz_loaders.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fuzz_loaders", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    fuzz = _fuzzer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fuzz.fuzz(CASES, SEED, fuzz.NON_CAPTURE_TARGETS, timeout=5.0, jobs=1, quiet=True)


@pytest.mark.parametrize("name", [t for t in _fuzzer().NON_CAPTURE_TARGETS if t != "trace"])
def test_non_trace_loaders_survive_fuzzing(outcomes: dict[str, object], name: str) -> None:
    out = outcomes[name]
    assert out.fed == CASES  # type: ignore[attr-defined]
    assert out.failures == []  # type: ignore[attr-defined]


def test_trace_loader_and_detect_survive_fuzzing(outcomes: dict[str, object]) -> None:
    assert outcomes["trace"].failures == []  # type: ignore[attr-defined]
    assert outcomes["detect"].failures == []  # type: ignore[attr-defined]


def test_fuzz_cases_are_replayable() -> None:
    fuzz = _fuzzer()
    bases = fuzz.base_files()
    a = fuzz.make_case(5, 17, "mprof", bases)
    b = fuzz.make_case(5, 17, "mprof", bases)
    assert (a.describe(), a.data) == (b.describe(), b.data)
    assert len({fuzz.make_case(5, i, "trace", bases).mutation for i in range(60)}) >= 6


def test_binary_shapes_load_or_are_refused() -> None:
    """The shapes fuzzed for binary formats (shared-reference bombs, truncations at many
    offsets, malformed workspaces) are made and each ends in a load or one sentence."""
    fuzz = _fuzzer()
    bases = fuzz.base_files()
    bombs = [fuzz.make_case(7, i, "cuda_snapshot", bases) for i in range(40)]
    assert any(c.mutation.startswith("pickle_bomb") for c in bombs)
    kinds = {fuzz.make_case(7, i, "workspace", bases).mutation for i in range(40)}
    assert {"wrong_types", "deep", "version"} <= kinds
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcomes = fuzz.fuzz(16, 7, fuzz.BINARY, timeout=20.0, jobs=2, quiet=True)
    assert outcomes["workspace"].fed == 4
    assert outcomes["cuda_snapshot"].fed == 12
    assert [f for out in outcomes.values() for f in out.failures] == []


def test_cli_summary_never_prints_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from perfview import cli

    fuzz = _fuzzer()
    bases = fuzz.base_files()
    codes: dict[int, int] = {}
    for i in range(200):
        case = fuzz.make_case(SEED, i, fuzz.NON_CAPTURE_TARGETS[i % 4], bases)
        path = tmp_path / f"{i}-{case.name}"
        path.write_bytes(case.data)
        code = cli.main(["summary", str(path), "--top", "3"])
        captured = capsys.readouterr()
        assert code in (0, 2), (case.describe(), captured.err)
        assert "Traceback" not in captured.err + captured.out
        if code == 2:  # one sentence, after the notice of a first compile (cold numba cache)
            said = [ln for ln in captured.err.splitlines() if "(once, ~15 s)" not in ln]
            assert len(said) == 1, captured.err
            assert said[0].startswith("perfview: ")
        codes[code] = codes.get(code, 0) + 1
    assert codes.get(0, 0) > 20
    assert codes.get(2, 0) > 20


# ---------------------------------------------------------------- regressions found by fuzzing


def _load(module: ModuleType, path: Path, data: bytes) -> object:
    path.write_bytes(data)
    return module.load(path)


def test_marshal_with_a_giant_declared_list_is_refused_at_once(tmp_path: Path) -> None:
    # `[` + 4 bytes declares a 1.5-billion-item list: marshal.loads would allocate 12 GB.
    data = b"\xfb)\x03\xfa\x01~\xe9\x00\x00\x00\x00" + b"[" * 100
    with pytest.raises(LoadError, match="size is larger"):
        _load(cprofile, tmp_path / "x.prof", data)


@pytest.mark.parametrize(
    "data",
    [
        b"\xfb\xa9\x02r\x01\x00\x00\x00NN0",  # a dict key refers to its own unfinished tuple
        b"\xa9\x02r\x00\x00\x00\x00N",  # a tuple that contains itself
        b"\xfbr\x05\x00\x00\x00N0",  # a ref to nothing
    ],
)
def test_marshal_refs_to_unfinished_objects_are_refused(tmp_path: Path, data: bytes) -> None:
    # marshal.loads(data[0]) segfaults CPython 3.11; the loader must refuse before that.
    with pytest.raises(LoadError, match="bad reference"):
        cprofile._check_marshal(data)
    (tmp_path / "x.prof").write_bytes(data)
    with pytest.raises(LoadError):
        loaders.detect(tmp_path / "x.prof").load(tmp_path / "x.prof")


def test_marshal_check_accepts_what_marshal_writes() -> None:
    shared = ("a.py", 1, "f")
    stats = {shared: (1, 1, 0.5, 0.5, {shared: (1, 1, 0.1, 0.1)}), ("b", 2, "g"): ([1], {1, 2})}
    for version in range(5):
        cprofile._check_marshal(marshal.dumps(stats, version))


def test_deeply_nested_marshal_is_a_load_error(tmp_path: Path) -> None:
    data = b"\xfb" + b"\xa9\x01" * 100_000 + b"NN0"
    with pytest.raises(LoadError):
        _load(cprofile, tmp_path / "x.prof", data)


@pytest.mark.parametrize(
    "value", ["x", None, float("nan"), float("inf"), -1, 2**64, 1e300, [1], True]
)
def test_pstats_with_wrong_types_is_a_load_error(tmp_path: Path, value: object) -> None:
    good = {("a.py", 1, "f"): (1, 1, 0.5, 0.5, {}), ("a.py", 5, "g"): (2, 2, 0.1, 0.1, {})}
    stats = dict(good)
    stats[("a.py", 1, "f")] = (1, value, 0.5, 0.5, {})
    with pytest.raises(LoadError, match="values no profiler writes"):
        _load(cprofile, tmp_path / "x.prof", marshal.dumps(stats))
    stats = dict(good)
    stats[("a.py", 5, "g")] = (2, 2, 0.1, 0.1, {("a.py", 1, "f"): (1, 1, value, 0.1)})
    with pytest.raises(LoadError, match="values no profiler writes"):
        _load(cprofile, tmp_path / "y.prof", marshal.dumps(stats))


def test_mprof_skips_lines_with_absurd_numbers(tmp_path: Path) -> None:
    lines = [
        "CMDLINE python x.py",
        "MEM 10.5 1700000000.0",
        "MEM inf 1700000000.1",  # non-finite memory
        "MEM 11.0 1e400",  # time overflows
        "MEM 12.0 18446744073709551616",  # 2**64 seconds
        "MEM 1e300 1700000000.2",  # beyond int64 bytes
        "CHLD 99999999999 3.0 1700000000.3",  # child index beyond int32
        "FUNC f 1.0 1700000000.0 nan 1700000000.1",  # the last field fails after others parse
        "FUNC g 1.0 1700000000.0 2.0 1700000000.1 70000",  # level beyond int16
        "MEM 13.0 1700000000.4",
    ]
    bundle = _load(mprof, tmp_path / "m.dat", "\n".join(lines).encode())
    assert bundle.memory.samples["rss_bytes"].tolist() == [int(10.5 * 2**20), 13 * 2**20]
    assert len(bundle.memory.children) == 0
    assert len(bundle.memory.spans) == 0
    assert bundle.warnings == ["skipped 7 malformed line(s)"]


def test_memprof_text_with_a_huge_line_number_loads(tmp_path: Path) -> None:
    text = (
        "Filename: a.py\n\nLine #    Mem usage    Increment  Occurrences   Line Contents\n"
        + "=" * 60
        + "\n     3     10.0 MiB     10.0 MiB           1   @profile\n"
        + "1" * 400
        + "     11.0 MiB      1.0 MiB           1       x = 1\n"
    )
    bundle = _load(memory_profiler_text, tmp_path / "r.txt", text.encode())
    assert bundle.lines.lines["line"].tolist() == [3]


# ------------------------------------------------------------------------------ memory limits


def test_detect_refuses_a_file_that_would_not_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.dat"
    path.write_text("CMDLINE x\nMEM 1.0 1700000000.0\n" * 1000)
    monkeypatch.setenv(limits.ENV_LIMIT, str(10 * 2**20))
    with pytest.raises(LoadError) as info:
        loaders.detect(path)
    message = str(info.value)
    assert re.fullmatch(
        r"it would need about \d+ MB of memory to open; the limit set by "
        r"PERFVIEW_MEMORY_LIMIT is 10 MB",
        message,
    ), message
    monkeypatch.setenv(limits.ENV_LIMIT, str(10 * 2**30))
    assert loaders.detect(path) is mprof


def test_machine_message_names_available_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"traceEvents": []}')
    monkeypatch.delenv(limits.ENV_LIMIT, raising=False)
    monkeypatch.setattr(limits, "available_memory", lambda: 21_000_000_000)
    monkeypatch.setattr(limits, "decoded_size", lambda _p: 9_500_000_000)
    with pytest.raises(LoadError, match=r"about 38 GB of memory to open; this machine has 21 GB"):
        loaders.detect(path)


def test_gzip_size_comes_from_the_trailer_or_a_safe_ratio(tmp_path: Path) -> None:
    content = b'{"traceEvents": [' + b'{"ph": "X", "ts": 1, "dur": 2},' * 5000 + b"{}]}"
    path = tmp_path / "t.json.gz"
    packed = gzip.compress(content)
    path.write_bytes(packed)
    assert limits.decoded_size(path) == len(content)
    # A trailer smaller than the compressed data cannot be real (a >4 GiB file wrapped mod 2**32).
    path.write_bytes(packed[:-4] + (10).to_bytes(4, "little"))
    assert limits.decoded_size(path) == len(packed) * limits.GZIP_RATIO
    plain = tmp_path / "p.dat"
    plain.write_bytes(b"MEM 1 2\n")
    assert limits.decoded_size(plain) == 8


# --------------------------------------------------------------- trace loader reproducers
# Found by the fuzzer: msgspec raised UnicodeDecodeError / RecursionError and the decimal
# fallback decimal.Overflow out of the trace loader.

_EV = b'{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1'
_DEEP = b"[" * 100_000 + b"]" * 100_000
TRACE_REPRODUCERS = {
    "invalid UTF-8 in an event name": b'[{"ph":"X","name":"a\xffb","ts":1,"dur":1}]',
    "invalid UTF-8 in a top-level key": b'{"traceEvents":[' + _EV + b'}],"x\xff":1}',
    "invalid UTF-8 in metadata": b'{"traceEvents":[' + _EV + b'}],"traceName":"\xc3"}',
    "args nested 100k deep (object form)": b'{"traceEvents":[' + _EV + b',"args":' + _DEEP + b"}]}",
    "args nested 100k deep (bare array)": b"[" + _EV + b',"args":' + _DEEP + b"}]",
    "a timestamp with a huge exponent": b'[{"ph":"X","name":"a","ts":1e9999999999,"dur":1}]',
}


@pytest.mark.parametrize("what", list(TRACE_REPRODUCERS))
def test_trace_reproducers_load_or_raise_load_error(tmp_path: Path, what: str) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(TRACE_REPRODUCERS[what])
    message = "loaded"
    try:
        loaders.detect(path).load(path)
    except LoadError as exc:
        message = str(exc)
    assert message
