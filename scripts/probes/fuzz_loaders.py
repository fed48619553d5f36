"""Fuzz every loader with mutated real files; only a load or a `LoadError` is acceptable.

    python3 scripts/probes/fuzz_loaders.py [--cases N] [--seed S] [--loader NAME] [--timeout 5]
                                    [--jobs J] [--replay INDEX --target NAME [--write PATH]]

Case `i` is a pure function of (seed, i): its target loader, its base file (a real sample from
../shared/samples, or the tests/data fixtures when the samples are absent) and its mutation
(truncation, flipped or inserted bytes, invalid UTF-8, huge numbers, deep nesting, wrong types
in every field, random bytes, splices). Every case is fed to the loader `detect()` picks *and*
force-fed to each loader. Anything but a clean load or a `LoadError` with a message is a failure,
and so is one loader call over `--timeout` seconds. Workers are separate processes watched by
the parent, which kills and replaces a worker whose call runs too long, so a hang is a reported
failure rather than a stuck run. Failures print their seed, index and target: `--replay` runs
one case in this process with the full traceback.

`--cases` is the total number of cases (default 10,000), spread evenly over the base
formats; since every case is fed to every loader, each loader gets all of them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import marshal
import os
import random
import re
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # fuzz_workspace beside this file

SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))
DATA = ROOT / "tests" / "data"
# The formats cases are based on: every registered loader (a new format is fuzzed as soon as
# it is registered, binary captures included) and the workspace reader, whose cases are fed to
# `documents.workspace.from_json` only.
WORKSPACE = "workspace"
BINARY = ("cuda_snapshot", "memray", "pstats", WORKSPACE)  # the formats --binary fuzzes


def _targets() -> tuple[str, ...]:
    from perfview.loaders.registry import LOADERS

    return (*(m.NAME for m in LOADERS), WORKSPACE)


TARGETS = _targets()
# The formats but the binary captures and workspaces (what tests/test_fuzz.py runs quickly)
NON_CAPTURE_TARGETS = tuple(t for t in TARGETS if t not in ("cuda_snapshot", "memray", WORKSPACE))
MAX_BASE_BYTES = 800_000  # bigger samples make each case slow without finding more
HUGE = (
    b"18446744073709551616", b"-18446744073709551617", b"1e400", b"-1e400", b"-0", b"NaN",
    b"-Infinity", b"Infinity", b"nan", b"inf", b"1e-400", b"99999999999999999999999999999999999",
    b"9223372036854775807", b"-9223372036854775808", b"0.000000000000000000001", b"1.5e308",
    b"0x1F", b"1_000", b"", b"-", b"1e", b".",
)  # fmt: skip
WRONG: tuple[Any, ...] = ("12", "", "x", {"a": 1}, [1, 2], [], {}, None, True, False, -1,
                          2**64, 1.5, -0.0, "NaN", "\udcff", "\x00", "é" * 3, 10**30)  # fmt: skip
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
WORDS = (b"MEM", b"CMDLINE", b"CHLD", b"FUNC", b"MiB", b"KiB", b"GiB", b"Line #", b"Filename:",
         b"def", b"=====", b"nan", b"\t", b"  ", b"\r", b"\x00", b"\xff", b"1e400")  # fmt: skip


# ------------------------------------------------------------------------------ base files


def base_files() -> dict[str, list[Path]]:
    """Base files per target loader: real samples when present, else the test fixtures."""
    from perfview import loaders

    real = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "SOURCES.md")
    fixtures = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix not in (".py", ".md"))
    pool = real or fixtures
    by_target: dict[str, list[Path]] = defaultdict(list)
    for path in pool:
        if path.stat().st_size > MAX_BASE_BYTES:
            continue
        try:
            name = loaders.detect(path).NAME
        except Exception:
            name = "pstats" if path.suffix in (".prof", ".pstats") else "trace"
        by_target[name].append(path)
    if real:  # a format no real sample has is fuzzed from its fixtures
        missing = _missing(by_target)
        for path in fixtures:
            if path.stat().st_size <= MAX_BASE_BYTES and (name := _detected(path)) in missing:
                by_target[name].append(path)
    return dict(by_target)


def _detected(path: Path) -> str:
    from perfview import loaders

    try:
        return loaders.detect(path).NAME
    except Exception:
        return ""


def _missing(by_target: dict[str, list[Path]]) -> set[str]:
    return {t for t in TARGETS if not by_target.get(t)}


# ------------------------------------------------------------------------------- mutations


def _truncate(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    return data[: rng.randrange(max(len(data), 1))]


def _flip(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 16))):
        if buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _insert(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    pos = rng.randrange(len(data) + 1)
    junk = rng.choice((rng.randbytes(rng.randint(1, 64)), rng.choice(WORDS), b"\n" * 3))
    return data[:pos] + junk + data[pos:]


def _bad_utf8(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        pos = rng.randrange(len(buf) + 1)
        buf[pos:pos] = rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80", b"\x80"))
    return bytes(buf)


def _huge_number(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    spans = [m.span() for m in NUMBER.finditer(data[:200_000])]
    if not spans:
        return data + rng.choice(HUGE)
    for _ in range(rng.choice((1, 1, 3, 20))):
        a, b = rng.choice(spans)
        value = rng.choice(HUGE)
        if len(value) != b - a:  # keep later spans valid: pad or replace the first char only
            data = data[:a] + value + data[b:]
            spans = [m.span() for m in NUMBER.finditer(data[:200_000])] or [(0, 0)]
        else:
            data = data[:a] + value + data[b:]
    return data


def _deep_nesting(rng: random.Random, data: bytes, fmt: str) -> bytes:
    depth = rng.choice((100, 1000, 5000, 100_000))
    nest = rng.choice((b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth))
    if fmt == "trace" and rng.random() < 0.8:
        spots = [m.end() for m in re.finditer(rb'"(?:args|name|ts|pid|traceEvents)"\s*:', data)]
        if spots:
            pos = rng.choice(spots)
            end = re.compile(rb"[,}\]]").search(data, pos)
            stop = end.start() if end else len(data)
            if data[pos:stop].strip()[:1] in (b"{", b"["):
                stop = pos
            return data[:pos] + nest + data[stop:]
    if fmt == "trace" and rng.random() < 0.5:
        return b'{"traceEvents":' + nest + b"}"
    if fmt == "pstats" and rng.random() < 0.5:
        return _deep_marshal(depth)
    pos = rng.randrange(len(data) + 1)
    return data[:pos] + nest + data[pos:]


def _deep_marshal(depth: int) -> bytes:
    """A marshal stream of `depth` nested tuples (written by hand: marshal.dumps would recurse)."""
    head = b"\xa9\x01" * depth  # small tuple of 1 (with ref flag)
    return b"\xfb" + head + b"N" + b"N0"  # dict, deep key, None value, NULL end


def _wrong_json(rng: random.Random, data: bytes) -> bytes | None:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list) or not events:
        return None
    for _ in range(rng.choice((1, 3, 30))):
        if rng.random() < 0.1 and isinstance(doc, dict):
            key = rng.choice([*doc.keys(), "traceEvents", "displayTimeUnit", "baseTimeNanoseconds"])
            doc[key] = rng.choice(WRONG)
            continue
        i = rng.randrange(len(events))
        ev = events[i]
        if not isinstance(ev, dict):
            events[i] = rng.choice(WRONG)
            continue
        key = rng.choice([*ev.keys(), "ts", "dur", "pid", "tid", "ph", "name", "cat", "id", "args"])
        ev[key] = rng.choice(WRONG)
        if isinstance(ev.get("args"), dict) and rng.random() < 0.3:
            ev["args"][rng.choice(["Ev Idx", "External id", "Bytes", "Addr", "x"])] = rng.choice(
                WRONG
            )
    try:
        if isinstance(doc, dict) and doc.get("traceEvents") is not events and rng.random() < 0.5:
            pass
        return json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError):
        return None


def _wrong_pstats(rng: random.Random, data: bytes) -> bytes | None:
    from perfview.core.model.errors import LoadError
    from perfview.loaders.cprofile import _check_marshal

    try:
        _check_marshal(data)  # marshal.loads alone may allocate gigabytes on mutated bytes
        stats = marshal.loads(data)
    except (ValueError, EOFError, TypeError, LoadError):
        return None
    if not isinstance(stats, dict) or not stats:
        return None
    items = list(stats.items())
    for _ in range(rng.choice((1, 3, 20))):
        i = rng.randrange(len(items))
        key, value = items[i]
        what = rng.random()
        wrong = rng.choice((*WRONG[:13], float("nan"), float("inf"), -(2**70)))
        if what < 0.2:
            if isinstance(key, tuple) and len(key) == 3 and rng.random() < 0.5:
                key = (key[0], wrong, key[2])
            else:
                key = wrong
            if isinstance(key, dict | list):
                key = str(key)
        elif what < 0.6 and isinstance(value, tuple):
            v = list(value)
            v[rng.randrange(len(v))] = wrong
            value = tuple(v)
        elif isinstance(value, tuple) and len(value) == 5 and isinstance(value[4], dict):
            callers = dict(value[4])
            if callers and rng.random() < 0.7:
                ck = rng.choice(list(callers))
                edge = callers[ck]
                if isinstance(edge, tuple) and rng.random() < 0.7:
                    e = list(edge)
                    e[rng.randrange(len(e))] = wrong
                    callers[ck] = tuple(e)
                else:
                    callers[ck] = wrong
            else:
                name = wrong if not isinstance(wrong, dict | list) else "x"
                callers[(name, 1, "f")] = (1, 1, 0.1, 0.1)
            value = (*value[:4], callers)
        else:
            value = wrong
        items[i] = (key, value)
    try:
        return marshal.dumps(dict(items))
    except (ValueError, TypeError):
        return None


def _wrong_any_json(rng: random.Random, data: bytes) -> bytes | None:
    """Any JSON document (speedscope, pyinstrument) with some values swapped for wrong ones."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    slots: list[tuple[Any, Any]] = []
    todo = [doc]
    while todo and len(slots) < 200_000:
        node = todo.pop()
        keys = (
            range(len(node))
            if isinstance(node, list)
            else node.keys()
            if isinstance(node, dict)
            else ()
        )
        for key in keys:
            slots.append((node, key))
            if isinstance(node[key], list | dict):
                todo.append(node[key])
    if not slots:
        return None
    for _ in range(rng.choice((1, 3, 30))):
        node, key = rng.choice(slots)
        node[key] = rng.choice((*WRONG, float("nan"), -(2**70)))
    try:
        return json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    except (ValueError, TypeError):
        return None


def _wrong_text(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.choice((1, 3, 30))):
        i = rng.randrange(len(lines))
        tokens = lines[i].split(b" ")
        j = rng.randrange(len(tokens))
        tokens[j] = rng.choice((*WORDS, *HUGE, rng.randbytes(3), b"-1", b"0", b"1" * 400))
        lines[i] = b" ".join(tokens)
        if rng.random() < 0.1:
            lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
    return b"\n".join(lines)


def _wrong_types(rng: random.Random, data: bytes, fmt: str) -> bytes:
    out: bytes | None = None
    if fmt == "trace":
        out = _wrong_json(rng, data)
    elif fmt == "pstats":
        out = _wrong_pstats(rng, data)
    elif data.lstrip()[:1] == b"{":  # any other JSON format (speedscope, pyinstrument, gecko…)
        out = _wrong_any_json(rng, data)
    return out if out is not None else _wrong_text(rng, data)


def _random_bytes(rng: random.Random, _data: bytes, _fmt: str) -> bytes:
    prefix = rng.choice(PREFIXES)
    return prefix + rng.randbytes(rng.choice((0, 1, 7, 100, 5000)))


def _splice(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    a, b = sorted(rng.randrange(len(data) + 1) for _ in range(2))
    return data[:b] + data[a:] if rng.random() < 0.5 else data[:a] + data[b:]


def _pickle_bomb(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    """A CUDA snapshot pickle whose values are shared-reference bombs: a list, dict or tuple
    naming the level below twice, `depth` levels, put where torch writes a frame's name, a
    frames list, a segment's blocks, a trace, a dict key; or a string built by repetition;
    or a memo index far beyond the file."""
    depth = rng.choice((20, 30, 40, 64))
    kind = rng.choice(("list", "dict", "tuple", "tuple_key", "set", "frozenset", "memo", "str"))
    if kind == "memo":
        index = rng.choice((2**20, 2**28, 1_401_369_748, 2**31 - 1, 2**32 - 1))
        put = b"r" + index.to_bytes(4, "little") if rng.random() < 0.7 else b"p%d\n" % index
        pos = rng.randrange(2, max(3, len(data)))
        return data[:pos] + b"]" + put + b"0" + data[pos:]
    if kind == "str":
        refs = b"h\x00" * rng.choice((10, 1000, 50_000))
        bomb = b"\x8c\x01x\x94(" + refs + b"l"  # a list of one string repeated
    else:
        level = {"list": b"l", "dict": b"d", "tuple": b"t", "tuple_key": b"t",
                 "set": b"t", "frozenset": b"t"}[kind]  # fmt: skip
        bomb = b"\x8c\x03lol\x940"
        for i in range(depth):
            pair = (
                b"h" + bytes([i]) + b"h" + bytes([i])
                if kind != "dict"
                else (b"\x8c\x01k" + b"h" + bytes([i]) + b"\x8c\x01j" + b"h" + bytes([i]))
            )
            bomb += b"(" + pair + level + b"\x940"  # memo i + 1, popped: only the top stays
        bomb += b"h" + bytes([depth])
        if kind == "tuple_key":
            bomb = b"}(" + bomb + b"K\x01u"
        elif kind == "set":
            bomb = b"\x8f(" + bomb + b"\x90"
        elif kind == "frozenset":
            bomb = b"(" + bomb + b"\x91"
    field = rng.choice(("name", "frames", "blocks", "segments", "device_traces", "filename"))
    where = data.find(b"\x8c" + bytes([len(field)]) + field.encode())
    value = b"\x80\x04}(\x8c\x08segments](}(\x8c\x05blocks]ue\x8c\x05value" + bomb + b"u."
    if where < 0 or rng.random() < 0.3:
        return value  # a tiny snapshot whose only value is the bomb (memo from 0)
    # after the field's key: the bomb replaces nothing, it is pushed as an extra value and
    # popped (the memo indices restart: a damaged file, which is the point)
    end = where + 2 + len(field)
    return data[:end] + bomb + b"0" + data[end:]


def _truncate_gzip(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    """The file gzipped, then cut: a capture copied while it was being written."""
    packed = gzip.compress(data, compresslevel=1)
    return packed[: rng.randrange(max(len(packed), 1))]


def _truncate_many(rng: random.Random, data: bytes, _fmt: str) -> bytes:
    """Cut near the start, the middle or the end (the header, a record, the trailer)."""
    n = len(data)
    where = rng.choice((rng.randrange(min(n, 64) + 1), n // 2 + rng.randrange(-64, 65),
                        n - rng.randrange(min(n, 64) + 1)))  # fmt: skip
    return data[: max(0, min(n, where))]


PREFIXES = (b"", b"\xfb", b"\xfb(", b"{(", b"CMDLINE x\n", b"MEM ", b"[", b"[{", b"\x1f\x8b",
            b'{"$schema":"speedscope","profiles":[', b'{"root_frame":', b"a;b;c ",
            b'{"traceEvents":[', b"Filename: a\nLine #  Mem usage\n",
            b'{"alloc_samples":0,"elapsed_time_sec":1,"files":{"a.py":{"lines":[',  # Scalene
            b"\x0a\x04\x08\x01\x10\x02")  # pprof: a sample type  # fmt: skip

MUTATIONS: dict[str, Callable[[random.Random, bytes, str], bytes]] = {
    "truncate": _truncate,
    "flip": _flip,
    "insert": _insert,
    "bad_utf8": _bad_utf8,
    "huge_number": _huge_number,
    "deep_nesting": _deep_nesting,
    "wrong_types": _wrong_types,
    "random_bytes": _random_bytes,
    "splice": _splice,
    "truncate_many": _truncate_many,
    "truncate_gzip": _truncate_gzip,
}
# Mutations only some formats get (each format's pool is MUTATIONS plus its own).
OWN_MUTATIONS: dict[str, dict[str, Callable[[random.Random, bytes, str], bytes]]] = {
    "cuda_snapshot": {"pickle_bomb": _pickle_bomb},
}


@dataclass
class Case:
    index: int
    target: str
    base: str
    mutation: str
    name: str
    data: bytes = b""

    def describe(self) -> str:
        return f"#{self.index} target={self.target} base={self.base} {self.mutation} as {self.name}"


def make_case(seed: int, index: int, target: str, bases: dict[str, list[Path]]) -> Case:
    """The case's bytes and description, a pure function of (seed, index, target)."""
    rng = random.Random(f"{seed}:{index}:{target}")
    if target == WORKSPACE:
        from fuzz_workspace import workspace_case  # type: ignore[import-not-found]

        mutation, data = workspace_case(rng)
        return Case(index, target, "workspace", mutation, "w.perfview", data)
    own = bases.get(target) or [p for ps in bases.values() for p in ps]
    pool = own if rng.random() < 0.85 else [p for ps in bases.values() for p in ps]
    path = rng.choice(pool)
    raw = path.read_bytes()
    fmt = next((t for t, ps in bases.items() if path in ps), target)
    mutations = {**MUTATIONS, **OWN_MUTATIONS.get(fmt, {})}
    mutation = rng.choice(list(mutations))
    steps = [mutation]
    gz = raw[:2] == b"\x1f\x8b"
    if gz and rng.random() < 0.8:
        try:
            content = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            content = raw
        data = mutations[mutation](rng, content, fmt)
        data = gzip.compress(data, compresslevel=1)
        steps.append("in gzip")
    else:
        data = mutations[mutation](rng, raw, fmt)
    if rng.random() < 0.15:
        second = rng.choice(list(MUTATIONS))
        data = MUTATIONS[second](rng, data, fmt)
        steps.append(f"+{second}")
    name = path.name if rng.random() < 0.6 else "unknown"
    return Case(index, target, str(path.name), " ".join(steps), name, data)


# ---------------------------------------------------------------------------------- running


@dataclass
class Outcome:
    fed: int = 0
    ok: int = 0
    failures: list[str] = field(default_factory=list)


def feed(path: Path, loader_name: str) -> str | None:
    """Feed one file to one loader ("detect" = the one detect() picks). None or a failure."""
    from perfview import loaders
    from perfview.core.model.errors import LoadError

    try:
        if loader_name == WORKSPACE:
            from fuzz_workspace import read_case

            read_case(path)
            return None
        if loader_name == "detect":
            loader = loaders.detect(path)
        else:
            loader = next(m for m in loaders.LOADERS if loader_name == m.NAME)
        loader.load(path)
    except LoadError as exc:
        text = str(exc)
        if not text.strip():
            return f"{loader_name}: LoadError with an empty message"
        if "internal error" in text:
            return f"{loader_name}: guarded internal error: {text}"
        return None
    except Exception as exc:  # the point of fuzzing: anything else is a bug
        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
        return f"{loader_name}: {type(exc).__name__}: {str(exc)[:160]} (at {where})"
    return None


def run_case(case: Case, folder: Path, step: Callable[[str], None] | None = None) -> list[str]:
    """Write the case and feed it to detect's pick and to every loader; the failures."""

    path = folder / case.name
    path.write_bytes(case.data)
    failures: list[str] = []
    for name in fed_to(case.target):
        if step is not None:
            step(name)
        started = time.monotonic()
        problem = feed(path, name)
        if problem:
            failures.append(problem)
        elif time.monotonic() - started > TIMEOUT[0]:
            failures.append(f"{name}: took {time.monotonic() - started:.1f} s")
    path.unlink(missing_ok=True)
    return failures


TIMEOUT = [5.0]
MEMORY = [6 << 30]  # address space a worker may map: a case beyond it fails (MemoryError)


def fed_to(target: str) -> tuple[str, ...]:
    """The loaders a case of `target` is fed to: detect's pick and every loader, or the
    workspace reader alone."""
    from perfview import loaders

    if target == WORKSPACE:
        return (WORKSPACE,)
    return ("detect", *[m.NAME for m in loaders.LOADERS])


def _worker(conn: Any, seed: int, timeout: float, memory: int) -> None:
    import resource
    import warnings

    warnings.simplefilter("ignore")
    if memory > 0:  # a case that maps more fails here instead of taking the machine
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    TIMEOUT[0] = timeout
    bases = base_files()
    with tempfile.TemporaryDirectory(prefix="perfview-fuzz-") as tmp:
        while True:
            try:
                job = conn.recv()
            except EOFError:  # the parent is gone
                return
            if job is None:
                return
            index, target = job
            describe = f"#{index} target={target}"
            try:
                case = make_case(seed, index, target, bases)
                describe = case.describe()
                failures = run_case(case, Path(tmp), lambda s: conn.send(("step", s)))
            except Exception as exc:  # the harness itself (disk full…): report, keep going
                failures = [f"harness: {type(exc).__name__}: {exc}"]
            conn.send(("done", (describe, failures)))


class Pool:
    """Worker processes fed one case at a time; a worker stuck in one call is killed."""

    def __init__(self, jobs: int, seed: int, timeout: float, memory: int) -> None:
        self.ctx = get_context("fork")
        self.seed, self.timeout, self.memory = seed, timeout, memory
        self.workers: list[dict[str, Any]] = [self._spawn() for _ in range(jobs)]

    def _spawn(self) -> dict[str, Any]:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(
            target=_worker, args=(child, self.seed, self.timeout, self.memory), daemon=True
        )
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "job": None, "step": "", "since": 0.0}

    def run(
        self, jobs: list[tuple[int, str]], on_result: Callable[[str, str, list[str]], None]
    ) -> None:
        queue = list(reversed(jobs))
        while queue or any(w["job"] for w in self.workers):
            for w in self.workers:
                if w["job"] is None and queue:
                    w["job"] = queue.pop()
                    w["since"], w["step"] = time.monotonic(), "make"
                    w["conn"].send(w["job"])
            ready = connection.wait([w["conn"] for w in self.workers if w["job"]], timeout=0.5)
            for w in self.workers:
                if w["conn"] in ready:
                    try:
                        kind, payload = w["conn"].recv()
                    except (EOFError, OSError):
                        self._replace(w, on_result, f"{w['step']}: worker died (native crash?)")
                        continue
                    if kind == "step":
                        w["step"], w["since"] = payload, time.monotonic()
                    else:
                        on_result(w["job"][1], payload[0], payload[1])
                        w["job"] = None
                elif w["job"] and time.monotonic() - w["since"] > self.timeout:
                    self._replace(w, on_result, f"{w['step']}: over {self.timeout:.0f} s (killed)")

    def _replace(self, w: dict[str, Any], on_result: Callable[..., None], why: str) -> None:
        index, target = w["job"]
        on_result(target, f"#{index} target={target} (replay for details)", [why])
        w["proc"].kill()
        w["proc"].join()
        w.update(self._spawn())

    def close(self) -> None:
        for w in self.workers:
            w["conn"].send(None)
            w["proc"].join(timeout=5)


def fuzz(
    cases: int,
    seed: int,
    targets: tuple[str, ...],
    timeout: float,
    jobs: int,
    quiet: bool = False,
    memory: int = 6 << 30,
) -> dict[str, Outcome]:
    """Run `cases` cases over the targets; outcomes per loader fed ("detect" included), each
    with its failures as replayable lines. `memory`: the address space of each worker."""
    outcomes = {t: Outcome() for t in ("detect", *TARGETS)}
    seen: Counter[str] = Counter()
    done = [0]
    started = time.monotonic()

    def on_result(target: str, describe: str, failures: list[str]) -> None:
        failed = {f.split(":", 1)[0] for f in failures}
        done[0] += 1
        if not quiet and done[0] % 250 == 0:
            bad = sum(len(o.failures) for o in outcomes.values())
            print(f"... {done[0]} cases, {bad} failures, {time.monotonic() - started:.0f} s",
                  flush=True)  # fmt: skip
        fed = fed_to(target)
        for name, out in outcomes.items():
            if name not in fed:
                continue
            out.fed += 1
            if name not in failed:
                out.ok += 1
        for f in failures:
            name = f.split(":", 1)[0]
            kind = re.sub(r"\d+", "N", f.split(" (at ")[0])[:90]
            seen[kind] += 1
            if seen[kind] <= 3 and not quiet:
                print(f"FAIL seed={seed} {describe}: {f}", flush=True)
            outcomes.get(name, outcomes["detect"]).failures.append(f"seed={seed} {describe}: {f}")

    job_list = [(i, targets[i % len(targets)]) for i in range(cases)]
    if jobs <= 1:
        TIMEOUT[0] = timeout
        bases = base_files()
        with tempfile.TemporaryDirectory(prefix="perfview-fuzz-") as tmp:
            for index, target in job_list:
                case = make_case(seed, index, target, bases)
                on_result(target, case.describe(), run_case(case, Path(tmp)))
        return outcomes
    pool = Pool(jobs, seed, timeout, memory)
    try:
        pool.run(job_list, on_result)
    finally:
        pool.close()
    return outcomes


def replay(seed: int, index: int, target: str, write: str | None) -> int:
    """Run one case here with full tracebacks (and optionally keep its file)."""
    from perfview import loaders

    case = make_case(seed, index, target, base_files())
    print(case.describe(), f"({len(case.data):,} bytes)")
    if write:
        Path(write).write_bytes(case.data)
        print(f"written to {write}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / case.name
        path.write_bytes(case.data)
        for name in fed_to(case.target):
            if name == WORKSPACE:
                print(f"{name}: {feed(path, name) or 'read, or one sentence'}")
                continue
            try:
                loader = (
                    loaders.detect(path)
                    if name == "detect"
                    else next(m for m in loaders.LOADERS if name == m.NAME)
                )
                bundle = loader.load(path)
                print(f"{name}: loaded ({bundle.format}, {bundle.counts})")
            except Exception as exc:  # print everything: this is the debugging path
                print(f"{name}: {type(exc).__name__}: {exc}")
                if not isinstance(exc, loaders.LoadError):
                    traceback.print_exc()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases (each fed to all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loader", choices=TARGETS, help="only cases based on this format")
    parser.add_argument(
        "--binary", action="store_true", help=f"only cases based on {', '.join(BINARY)}"
    )
    parser.add_argument(
        "--memory", type=float, default=6.0, help="GiB of address space a worker may map"
    )
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per loader call")
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)))
    parser.add_argument("--replay", type=int, metavar="INDEX", help="run one case verbosely")
    parser.add_argument("--target", choices=TARGETS, help="the target of the replayed case")
    parser.add_argument("--write", metavar="PATH", help="with --replay: save the case's file")
    args = parser.parse_args(argv)
    if args.replay is not None:
        return replay(args.seed, args.replay, args.target or args.loader or "trace", args.write)
    targets = (args.loader,) if args.loader else BINARY if args.binary else TARGETS
    started = time.monotonic()
    memory = int(args.memory * 2**30)
    outcomes = fuzz(args.cases, args.seed, targets, args.timeout, args.jobs, memory=memory)
    elapsed = time.monotonic() - started
    print(f"\nseed {args.seed}, {args.jobs} worker(s), {elapsed:.0f} s")
    print(f"{'loader':<14}{'cases':>8}{'accepted':>10}{'failing':>9}")
    total_fail = 0
    for name, out in outcomes.items():
        bad = out.fed - out.ok
        total_fail += bad
        if not out.fed:
            continue
        print(f"{name:<14}{out.fed:>8}{out.ok:>10}{bad:>9}")
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
