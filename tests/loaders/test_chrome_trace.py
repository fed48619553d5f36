"""Chrome trace / kineto loader: real samples checked against counts computed here with `json`,
plus hand-written traces for each rule (B/E, flows, async, counters, overlap, exact times)."""

from __future__ import annotations

import functools
import gzip
import json
import shutil
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview.core.model import Bundle, schema
from perfview.core.model.errors import LoadCancelled, LoadError
from perfview.loaders import detect, trace
from perfview.loaders import load as load_any
from perfview.loaders.base import read_head
from tests.conftest import sample

TRACE_SAMPLES = [
    "kineto_gpu/hta_sampled_rank-0.json.gz",
    "kineto_gpu/hta_sampled_rank-1.json.gz",
    "kineto_gpu/hta_nccl_data.json.gz",
    "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz",
    "kineto_gpu/hta_mi250_rocm6.2.json.gz",
    "kineto_gpu/zoology_trace.json",
    "kineto_cpu/dtu_jc_resnet18_cpu_trace.json",
    "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json",
    "kineto_cpu/hta_cpu_only_rank-34.pt.trace.json.gz",
    "chrome_trace/catapult_simple_trace.json",
    "chrome_trace/catapult_flow.json",
    "chrome_trace/devtools_trace_chrome116.json",
    "chrome_trace/devtools_timeline_chrome65_array.json",
    "odd/hta_large_integer_rank-70.pt.trace.json.gz",
]
MEMORY = ("[memory]", "[OutOfMemory]")
FIXTURE = Path(__file__).resolve().parent.parent / "data" / "torch_cpu_small.pt.trace.json.gz"


@functools.cache
def loaded(path: Path) -> Bundle:
    """One load per sample for the whole module (tests only read the result)."""
    return trace.load(path)


@functools.cache
def read_events(path: Path, parse_float: Any = float) -> tuple[list[dict[str, Any]], dict]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    data = json.loads(raw, parse_float=parse_float)
    if isinstance(data, list):
        return [e for e in data if isinstance(e, dict)], {}
    return [e for e in data["traceEvents"] if isinstance(e, dict)], data


def expected_counts(events: list[dict[str, Any]]) -> dict[str, int]:
    """What the loader must report, computed with a plain per-thread stack."""
    ph = Counter(e.get("ph") for e in events)
    be = sorted(
        (e for e in events if e.get("ph") in ("B", "E")),
        key=lambda e: (str(e.get("pid")), str(e.get("tid")), float(e["ts"])),
    )
    stacks: dict[tuple[str, str], int] = {}
    pairs = 0
    for e in be:
        key = (str(e.get("pid")), str(e.get("tid")))
        if e["ph"] == "B":
            stacks[key] = stacks.get(key, 0) + 1
        elif stacks.get(key, 0):
            stacks[key] -= 1
            pairs += 1
    left_open = sum(stacks.values())
    memory = sum(1 for e in events if e.get("ph") in ("i", "I") and e.get("name") in MEMORY)
    instants = sum(1 for e in events if e.get("ph") in ("i", "I", "R", "n")) - memory
    return {
        "events": len(events),
        "slices": ph["X"] + pairs + left_open,
        "closed_at_end": left_open,
        "instants": instants,
        "counters": ph["C"],
        "flows": ph["s"],
        "flow_ends": ph["f"],
        "memory_events": memory,
        "metadata": ph["M"],
    }


def write(tmp_path: Path, events: Any, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(events))
    return path


# ---------------------------------------------------------------- real samples


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_sample_counts_match_json(rel: str) -> None:
    path = sample(rel)
    events, _ = read_events(path)
    bundle = loaded(path)
    want = expected_counts(events)
    assert {k: bundle.counts[k] for k in want} == want
    tl = bundle.timeline
    assert tl is not None
    assert len(tl.events) == bundle.counts["slices"] + bundle.counts["async"]
    assert len(tl.memory) == want["memory_events"]
    assert len(tl.lanes) == bundle.counts["lanes"]
    schema.validate(tl.events, schema.EVENTS)
    schema.validate(tl.lanes, schema.LANES)
    # sorted by (lane, ts, -dur); parents enclose their children on the same lane
    ev = tl.events
    key = np.lexsort((-ev["dur"].to_numpy(), ev["ts"].to_numpy(), ev["lane"].to_numpy()))
    assert (key == np.arange(len(ev))).all()
    par = ev["parent"].to_numpy()
    child = np.flatnonzero(par >= 0)
    p = par[child]
    assert (ev["lane"].to_numpy()[p] == ev["lane"].to_numpy()[child]).all()
    assert (ev["ts"].to_numpy()[p] <= ev["ts"].to_numpy()[child]).all()
    ends = ev["ts"].to_numpy() + ev["dur"].to_numpy()
    assert (ends[p] >= ends[child]).all()
    assert (ev["depth"].to_numpy()[child] == ev["depth"].to_numpy()[p] + 1).all()
    assert ev["ts"].min() >= 0
    assert bundle.duration_ns >= int(ends.max())


@pytest.mark.parametrize("rel", [*TRACE_SAMPLES[:4], "chrome_trace/catapult_flow.json"])
def test_sample_loads_under_a_neutral_name(rel: str, tmp_path: Path) -> None:
    path = sample(rel)
    neutral = tmp_path / "unknown"
    shutil.copyfile(path, neutral)
    assert detect(neutral) is trace
    bundle = load_any(neutral)
    assert bundle.format == "trace"
    assert bundle.counts == loaded(path).counts


def test_sniff_refuses_python2_pstats_and_pprof() -> None:
    for rel in ("odd/gprof2dot_py2_cProfile.pstats", "odd/speedscope_pprof_simple.prof"):
        path = sample(rel)
        assert not trace.sniff(read_head(path), path)
    assert trace.sniff(b'\xef\xbb\xbf  [ {"ph": "X"', Path("x"))
    assert trace.sniff(b'{"traceEvents": [', Path("x"))
    assert not trace.sniff(b'{"a": 1}', Path("x"))
    assert not trace.sniff(b"[[1, 2]]", Path("x"))


@pytest.mark.parametrize(
    "rel",
    ["odd/speedscope_simple-partial.json", "odd/speedscope_simple-partial-trailing-comma.json"],
)
def test_partial_arrays_load_all_their_events(rel: str) -> None:
    bundle = trace.load(sample(rel))
    assert bundle.counts["events"] == 6
    assert bundle.counts["slices"] == 4  # 2 X + 2 B/E pairs
    tl = bundle.timeline
    assert tl is not None
    got = dict(zip(tl.events["name"].astype(str), tl.events["depth"].tolist(), strict=True))
    assert got == {"alpha": 0, "beta": 1, "gamma": 2, "epsilon": 2}
    assert tl.args.get(int(np.flatnonzero(tl.events["name"] == "gamma")[0])) == {"detail": "foobar"}
    assert any("not closed" in w for w in bundle.warnings)


def test_large_integer_args_survive() -> None:
    bundle = trace.load(sample("odd/hta_large_integer_rank-70.pt.trace.json.gz"))
    tl = bundle.timeline
    assert tl is not None
    row = int(np.flatnonzero(tl.events["name"] == "record_param_comms")[0])
    assert tl.args.get(row)["Comms Id"] == 10159970886766084423
    assert tl.events["kind"].astype(str).tolist().count("kernel") == 1


# ---------------------------------------------------------------- torch semantics


def test_nccl_kernels_links_and_flows() -> None:
    path = sample("kineto_gpu/hta_nccl_data.json.gz")
    events, top = read_events(path)
    bundle = loaded(path)
    tl = bundle.timeline
    assert tl is not None
    assert tl.is_torch
    assert tl.meta["distributedInfo"]["rank"] == top["distributedInfo"]["rank"]
    assert tl.meta["baseTimeNanoseconds"] == top["baseTimeNanoseconds"]
    ev = tl.events
    kind = ev["kind"].astype(str).to_numpy()
    assert (kind == "kernel").sum() == sum(1 for e in events if e.get("cat") == "kernel")
    assert (kind == "memcpy").sum() == sum(1 for e in events if e.get("cat") == "gpu_memcpy")
    # correlation: every kernel's id is a cuda_runtime's id (CPU launch <-> GPU kernel)
    kernel_corr = set(ev["corr"][kind == "kernel"].tolist())
    runtime_corr = set(ev["corr"][kind == "runtime"].tolist())
    want = {e["args"]["correlation"] for e in events if e.get("cat") == "kernel"}
    assert kernel_corr == want
    assert len(kernel_corr & runtime_corr) / len(kernel_corr) > 0.95
    # External id: kernels point at cpu_ops
    assert set(ev["ext_id"][kind == "kernel"].tolist()) <= set(ev["ext_id"][kind == "cpu_op"])
    # ac2g flows bind a runtime call to the kernel/memcpy with the same correlation id
    fl = tl.flows
    ac2g = fl[(fl["cat"] == "ac2g") & (fl["src_event"] >= 0) & (fl["dst_event"] >= 0)]
    assert len(ac2g) > 1000
    src, dst = ac2g["src_event"].to_numpy(), ac2g["dst_event"].to_numpy()
    assert (kind[src] == "runtime").all()
    assert set(kind[dst]) <= {"kernel", "memcpy", "memset"}
    assert (ev["corr"].to_numpy()[src] == ev["corr"].to_numpy()[dst]).all()
    # GPU stream lanes are labelled by device and stream
    gpu = tl.lanes[tl.lanes["device"] == "gpu:0"]
    assert set(gpu["label"]) == {"GPU 0 · stream 7", "GPU 0 · stream 40"}
    cpu_first = tl.lanes["device"].tolist()
    assert cpu_first.index("gpu:0") > cpu_first.index("cpu")
    # args are kept per slice
    k = int(np.flatnonzero(kind == "kernel")[0])
    assert tl.args.get(k)["correlation"] == ev["corr"].iat[k]


def test_resnet_old_schema_kinds_memory_and_shapes() -> None:
    path = sample("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz")
    events, _ = read_events(path)
    bundle = loaded(path)
    tl = bundle.timeline
    assert tl is not None
    assert tl.is_torch
    kinds = Counter(tl.events["kind"].astype(str))
    cats = Counter(e.get("cat") for e in events if e.get("ph") == "X")
    assert kinds["kernel"] == cats["Kernel"]
    assert kinds["memcpy"] == cats["Memcpy"]
    assert kinds["memset"] == cats["Memset"]
    assert kinds["runtime"] == cats["Runtime"]
    assert kinds["cpu_op"] + kinds["annotation"] == cats["Operator"]
    mem = [e for e in events if e.get("name") == "[memory]"]
    assert len(tl.memory) == len(mem) == 12_838
    assert tl.memory["bytes"].sum() == sum(e["args"]["Bytes"] for e in mem)
    assert (tl.memory["device_type"] == 0).sum() == sum(
        1 for e in mem if e["args"]["Device Type"] == 0
    )
    assert "[memory]" not in set(tl.instants["name"].astype(str))
    # no sort indexes in 2021 files: CPU threads first, then the GPU stream (tid "stream 7")
    assert tl.lanes["device"].tolist()[:3] == ["cpu", "cpu", "gpu:0"]
    assert tl.lanes["label"].iat[2] == "GPU 0 · stream 7"
    first_op = next(e for e in events if e.get("cat") == "Operator" and "Input Dims" in e["args"])
    dims = json.dumps(first_op["args"]["Input Dims"])
    assert dims in set(tl.events["shape"].astype(str))
    # old files spell it "external id"; kernels still get ext_id
    assert (tl.events["ext_id"][tl.events["kind"] == "kernel"] >= 0).all()
    assert tl.origin_ns == min(int(e["ts"]) for e in events if e["ph"] != "M") * 1000


def test_mi250_times_are_exact_with_base_time() -> None:
    path = sample("kineto_gpu/hta_mi250_rocm6.2.json.gz")
    events, top = read_events(path, parse_float=Decimal)
    tl = trace.load(path).timeline
    assert tl is not None
    t0 = min(Decimal(e["ts"]) for e in events if e["ph"] != "M")
    assert tl.origin_ns == top["baseTimeNanoseconds"] + int(t0 * 1000)
    xs = [e for e in events if e["ph"] == "X"]
    want = sorted((int((Decimal(e["ts"]) - t0) * 1000), int(Decimal(e["dur"]) * 1000)) for e in xs)
    got = sorted(zip(tl.events["ts"].tolist(), tl.events["dur"].tolist(), strict=True))
    assert got == want


def test_torch_fixture_loads() -> None:
    if not FIXTURE.exists():
        pytest.skip("tests/data/torch_cpu_small.pt.trace.json.gz not generated")
    events, top = read_events(FIXTURE)
    bundle = trace.load(FIXTURE)
    tl = bundle.timeline
    assert tl is not None
    assert tl.is_torch
    assert {k: bundle.counts[k] for k in expected_counts(events)} == expected_counts(events)
    steps = tl.events[tl.events["name"].astype(str).str.startswith("ProfilerStep#")]
    assert len(steps) == 1
    assert set(steps["kind"].astype(str)) == {"annotation"}
    assert len(tl.memory) == sum(1 for e in events if e.get("name") == "[memory]") > 0
    assert "[[4, 8]" in " ".join(tl.events["shape"].astype(str))
    assert tl.meta["profile_memory"] == top["profile_memory"]


# ---------------------------------------------------------------- hand-written rules


def ev(ph: str, name: str, ts: float, **kw: Any) -> dict[str, Any]:
    return {
        "ph": ph,
        "name": name,
        "ts": ts,
        "pid": kw.pop("pid", 1),
        "tid": kw.pop("tid", 1),
        **kw,
    }


def test_begin_end_open_at_end_and_stray_end(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            ev("E", "stray", 0),
            ev("B", "outer", 1),
            ev("B", "inner", 2),
            ev("E", "inner", 4),
            ev("X", "last", 5, dur=10),
        ],
    )
    bundle = trace.load(path)
    tl = bundle.timeline
    assert tl is not None
    rows = {
        n: (t, d, dep)
        for n, t, d, dep in zip(
            tl.events["name"].astype(str), tl.events["ts"], tl.events["dur"], tl.events["depth"],
            strict=True,
        )
    }  # fmt: skip
    # times are relative to the first event (the stray E at 0 µs)
    assert rows == {"outer": (1000, 14000, 0), "inner": (2000, 2000, 1), "last": (5000, 10000, 1)}
    assert "closed 1 slices left open at the end of the trace" in bundle.warnings
    assert any("1 end events (E) that match no begin" in w for w in bundle.warnings)


def test_overlapping_slices_go_to_an_extra_row(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            ev("X", "a", 0, dur=10, pid=0, tid="stream 7", cat="kernel"),
            ev("X", "b", 5, dur=10, pid=0, tid="stream 7", cat="kernel"),
            ev("X", "c", 20, dur=1, pid=0, tid="stream 7", cat="kernel"),
        ],
    )
    bundle = trace.load(path)
    tl = bundle.timeline
    assert tl is not None
    assert tl.lanes["label"].tolist() == ["GPU 0 · stream 7", "GPU 0 · stream 7 (overlap 1)"]
    assert tl.lanes["sub"].tolist() == [0, 1]
    assert tl.lanes["n_events"].tolist() == [2, 1]
    assert len(tl.events) == 3  # never dropped
    assert bundle.counts["overlapping_slices"] == 1
    assert any("1 slices overlap" in w for w in bundle.warnings)


def test_flows_bind_to_enclosing_and_next_slices(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            ev("X", "launch", 0, dur=10, tid=1),
            ev("X", "kernel", 20, dur=5, tid=2),
            ev("X", "later", 40, dur=5, tid=2),
            ev("s", "f1", 2, id=7, cat="ac2g", tid=1),
            ev("f", "f1", 22, id=7, cat="ac2g", tid=2, bp="e"),
            ev("s", "f2", 3, id="0x8", cat="x", tid=1),
            ev("f", "f2", 30, id="0x8", cat="x", tid=2),  # no bp: next slice at/after 30
            ev("f", "orphan", 31, id=9, cat="x", tid=2),
        ],
    )
    bundle = trace.load(path)
    tl = bundle.timeline
    assert tl is not None
    names = tl.events["name"].astype(str).tolist()
    fl = tl.flows.sort_values("src_ts")
    bound = [(names[s], names[d]) for s, d in zip(fl["src_event"], fl["dst_event"], strict=True)]
    assert bound == [("launch", "kernel"), ("launch", "later")]
    assert fl["dst_ts"].tolist() == [22000, 30000]
    assert bundle.counts["flows"] == 2
    assert bundle.counts["orphan_flow_ends"] == 1
    assert "1 flow ends have no start (orphan flow ends)" in bundle.warnings


def test_counters_async_instants_and_string_pids(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "traceEvents": [
                ev("C", "mem", 0, args={"used": 1, "free": 9}, pid="Spans"),
                ev("C", "mem", 5, args={"used": 2, "free": 8}, pid="Spans"),
                ev("C", "load", 5, args={"value": 0.5}, pid="Spans"),
                ev("b", "req", 1, id="0x1", cat="net", pid="Spans"),
                ev("b", "req", 2, id="0x2", cat="net", pid="Spans"),
                ev("e", "req", 6, id="0x1", cat="net", pid="Spans"),
                ev("e", "req", 7, id="0x2", cat="net", pid="Spans"),
                ev("i", "mark", 3, s="g", pid="Spans"),
                ev("X", "work", 0, dur=2, pid="Spans", tid="Traces"),
                ev("P", "sample", 1),
                {"ph": "M", "name": "process_name", "pid": "Spans", "ts": 0, "args": {"name": "S"}},
            ],
            "displayTimeUnit": "ns",
            "stackFrames": {"1": {"name": "x"}},
        },
    )
    bundle = trace.load(path)
    tl = bundle.timeline
    assert tl is not None
    assert not tl.is_torch
    assert tl.meta["displayTimeUnit"] == "ns"
    c = tl.counters
    assert sorted(set(c["name"].astype(str))) == ["load", "mem.free", "mem.used"]
    assert c[c["name"] == "mem.used"]["value"].tolist() == [1.0, 2.0]
    assert bundle.counts["counters"] == 3
    a = tl.events[tl.events["kind"] == "async"]
    assert sorted(zip(a["ts"], a["dur"], strict=True)) == [(1000, 5000), (2000, 5000)]
    assert len(set(a["lane"])) == 2  # overlapping async pairs: main row + overlap row
    assert tl.instants["scope"].astype(str).tolist() == ["g"]
    assert (tl.events["pid"] < 0).all()  # "Spans" -> negative id, text kept in labels
    assert any(label.startswith("S · ") for label in tl.lanes["label"])
    assert "ignored 1 events of unsupported phases (P: 1)" in bundle.warnings


def test_fractional_epoch_microseconds_are_exact(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        '{"traceEvents": ['
        '{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1712195495519695.8, "dur": 1.5},'
        '{"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1712195495519690, "dur": 20.0004},'
        '{"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": "1712195495519700.123", "dur": "2"}'
        "]}"
    )
    tl = trace.load(path).timeline
    assert tl is not None
    assert tl.origin_ns == 1712195495519690000
    times = zip(tl.events["ts"], tl.events["dur"], strict=True)
    got = dict(zip(tl.events["name"].astype(str), times, strict=True))
    assert got == {"b": (0, 20000), "a": (5800, 1500), "c": (10123, 2000)}


# ---------------------------------------------------------------- damaged files and errors


def test_truncated_mid_event_loads_what_is_complete(tmp_path: Path) -> None:
    src = sample("chrome_trace/catapult_flow.json").read_bytes()
    cut = src[: len(src) // 2]
    path = tmp_path / "cut.json"
    path.write_bytes(cut)
    bundle = trace.load(path)
    n = bundle.counts["events"]
    assert 1000 < n < 5017
    assert any(f"truncated after {n:,} events" in w for w in bundle.warnings)
    gz = tmp_path / "cut.json.gz"
    packed = gzip.compress(src)
    gz.write_bytes(packed[: len(packed) // 2])
    bundle = trace.load(gz)
    assert bundle.counts["events"] > 100
    assert any("gzip stream ends early" in w for w in bundle.warnings)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello", "not JSON"),
        (b'{"a": 1}', "no traceEvents"),
        (b'{"traceEvents": []}', "no events"),
        (b"[]", "no events"),
        (b'{"traceEvents": {"a": 1}}', "not a list"),
    ],
)
def test_errors_are_sentences(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(LoadError, match=message):
        trace.load(path)


def test_progress_is_reported_and_cancel_propagates(tmp_path: Path) -> None:
    path = write(tmp_path, [ev("X", "a", 0, dur=1)])
    seen: list[float] = []
    trace.load(path, progress=lambda f, m: seen.append(f))
    assert seen[0] == 0.0
    assert seen[-1] == 1.0
    assert seen == sorted(seen)

    def cancel(fraction: float, message: str) -> None:
        if fraction > 0.5:
            raise LoadCancelled

    with pytest.raises(LoadCancelled):
        trace.load(path, progress=cancel)


def test_parse_decimal_is_exact_and_tolerant() -> None:
    from perfview.loaders.trace.numbers import parse_decimal

    texts = b'1.5\n"2.25"\n-3.0004\n\n1e3\nN/A\n1712195495519695.8\n0.0005\n12345678901234567890'
    values, ok = parse_decimal(texts, 9, 3)
    assert ok.tolist() == [True, True, True, False, True, False, True, True, False]
    assert values[ok].tolist() == [1500, 2250, -3000, 1_000_000, 1712195495519695800, 1]
    ints, ok = parse_decimal(b"10159970886766084423\n7\n", 3, 0)
    assert ok.tolist() == [False, True, False]  # beyond int64 -> not a usable id
    assert ints[1] == 7


# --- the general path's typed numbers must give exactly what its textual reading gives ---

TABLES = ("events", "lanes", "instants", "counters", "flows", "memory")


def _same_bundles(a: Bundle, b: Bundle) -> None:
    assert a.timeline is not None
    assert b.timeline is not None
    for name in TABLES:
        left, right = getattr(a.timeline, name), getattr(b.timeline, name)
        assert left.equals(right), name
    assert bytes(a.timeline.args.blob) == bytes(b.timeline.args.blob)
    assert np.array_equal(a.timeline.args.starts, b.timeline.args.starts)
    assert np.array_equal(a.timeline.args.lens, b.timeline.args.lens)
    assert (a.timeline.origin_ns, a.counts, a.warnings) == (
        b.timeline.origin_ns,
        b.counts,
        b.warnings,
    )


def _exact_only(monkeypatch: pytest.MonkeyPatch, path: Path) -> Bundle:
    from perfview.loaders.trace import general

    with monkeypatch.context() as m:
        m.setattr(general, "_typed_batch", lambda *args: None)
        return trace.load(path)


@pytest.mark.parametrize("rel", TRACE_SAMPLES)
def test_fast_path_equals_exact_path_on_samples(rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = sample(rel)
    _same_bundles(loaded(path), _exact_only(monkeypatch, path))


TRICKY_TS = [
    "1623142623460147",  # old kineto: integer epoch µs (ns exceed 2**53)
    "1712195495519695.8",  # epoch µs with a fraction: floats cannot hold it, the text decides
    "1.0005",  # a tie: half up gives 1001 ns, rint of the float would give 1000
    "2.00049999",
    "-3.0005",
    "0.0015",
    "1.5e3",
    "12345.678",
    "9999999999.999",  # beyond 2**33 µs: read from its text
]


def _tricky_trace(tmp_path: Path, extra: str = "") -> Path:
    events = [
        f'{{"ph":"X","name":"op{i}","cat":"cpu_op","pid":1,"tid":2,"ts":{ts},"dur":{ts.lstrip("-")},'
        f'"args":{{"External id":{2**62 + i},"correlation":{i},"Input Dims":[[{i}, 3]]}}}}'
        for i, ts in enumerate(TRICKY_TS)
    ]
    events.append(
        '{"ph":"s","name":"f","cat":"ac2g","pid":1,"tid":2,"ts":1.0,"id":18446744073709551617}'
    )
    events.append(
        '{"ph":"f","name":"f","cat":"ac2g","pid":1,"tid":2,"ts":1.0006,"id":18446744073709551617,"bp":"e"}'
    )
    if extra:
        events.append(extra)
    path = tmp_path / "tricky.json"
    path.write_text('{"traceEvents":[' + ",".join(events) + "]}")
    return path


def _expected_ns(text: str) -> int:
    value = Decimal(text) * 1000
    return int(value.to_integral_value(rounding="ROUND_HALF_UP"))


@pytest.mark.parametrize(
    "extra",
    ["", '{"ph":"X","name":"quoted","pid":1,"tid":2,"ts":"5.5","dur":1}'],
    ids=["fast", "falls-back"],
)
def test_fast_path_is_exact_on_tricky_numbers(
    tmp_path: Path, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _tricky_trace(tmp_path, extra)
    fast = trace.load(path)
    _same_bundles(fast, _exact_only(monkeypatch, path))
    assert fast.timeline is not None
    ev = fast.timeline.events
    origin = fast.timeline.origin_ns
    for i, text in enumerate(TRICKY_TS):
        row = ev[ev["name"] == f"op{i}"].iloc[0]
        assert int(row["ts"]) + origin == _expected_ns(text), text
        assert int(row["dur"]) == _expected_ns(text.lstrip("-")), text
        assert int(row["ext_id"]) == 2**62 + i
    assert fast.counts["flows"] == 1


def test_fast_path_runs_on_plain_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from perfview.loaders.trace import general

    calls: list[bool] = []
    real = general._typed_batch

    def spy(*args: Any) -> Any:
        got = real(*args)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(general, "_typed_batch", spy)
    trace.load(_tricky_trace(tmp_path))
    assert calls == [True]
    calls.clear()
    trace.load(_tricky_trace(tmp_path, '{"ph":"i","name":"n","pid":1,"tid":2,"ts":null}'))
    assert calls == [False]  # a null ts is not a number: the whole batch is read as text
