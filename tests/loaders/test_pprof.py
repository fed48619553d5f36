"""pprof profiles (gzipped and plain protobuf): per sample type, the totals perfview counts and
the tree's weight equal an independent sum of the sample values, read here by a plain walk of
the protobuf wire format (not the loader's protobuf parser); renamed files sniff the same;
damaged files are one sentence."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from perfview.core.model.errors import LoadError
from perfview.loaders import FRESH, detect, load
from perfview.loaders import pprof as pprof_loader
from tests.conftest import DATA, sample

pytest.importorskip("google.protobuf", reason="pprof needs the `pprof` extra (protobuf)")

PPROF = DATA / "pprof"
FILES = ("fib.pb.gz", "profile-with-labels.pb.gz", "profile1.pb")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, varint value or bytes) of one message, in order."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        if key & 7 == 0:
            value, pos = _varint(data, pos)
            out.append((key >> 3, value))
        else:
            size, pos = _varint(data, pos)
            out.append((key >> 3, data[pos : pos + size]))
            pos += size
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def independent(path: Path) -> tuple[list[str], list[int], int]:
    """The sample types' "type/unit" names, each type's sum of values, and the sample count."""
    raw = path.read_bytes()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    top = _fields(data)
    strings = [v.decode() for n, v in top if n == 6 and isinstance(v, bytes)]
    types = []
    for n, v in top:
        if n == 1 and isinstance(v, bytes):
            f = dict(_fields(v))
            types.append(f"{strings[int(f.get(1, 0))]}/{strings[int(f.get(2, 0))]}")
    sums = [0] * len(types)
    n_samples = 0
    for n, v in top:
        if n != 2 or not isinstance(v, bytes):
            continue
        n_samples += 1
        values: list[int] = []
        for m, w in _fields(v):
            if m == 2 and isinstance(w, bytes):  # packed
                pos = 0
                while pos < len(w):
                    x, pos = _varint(w, pos)
                    values.append(_signed(x))
            elif m == 2 and isinstance(w, int):
                values.append(_signed(w))
        for i, x in enumerate(values):
            sums[i] += x
    return types, sums, n_samples


@pytest.mark.parametrize("name", FILES)
def test_totals_equal_an_independent_sum(name: str, tmp_path: Path) -> None:
    path = tmp_path / "profile.bin"  # a neutral name: the content decides
    shutil.copyfile(PPROF / name, path)
    assert detect(path) is pprof_loader
    bundle = load(path, options=FRESH)
    types, sums, n_samples = independent(PPROF / name)
    assert bundle.format == "sampled"
    assert bundle.counts["samples"] == n_samples
    for kind, total in zip(types, sums, strict=True):
        assert bundle.counts[kind] == total
    assert bundle.tree is not None
    assert bundle.sampled is not None
    scale = 1e3 if types[-1].endswith("μs") else 1.0  # Austin's microseconds become ns
    assert bundle.tree.metrics["total_ns"][0] == pytest.approx(sums[-1] * scale)
    assert bundle.tree.metrics["calls"][0] == n_samples
    assert int(bundle.sampled.threads["samples"].sum()) == n_samples


def test_thread_labels_become_roots(tmp_path: Path) -> None:
    """Samples labelled with a thread (Austin writes `Thread ID`, others `thread_name`) hang
    under one root per thread: fib's samples split between two labelled threads."""
    from perfview.loaders.pprof_proto import message_class

    profile = message_class().FromString(gzip.decompress((PPROF / "fib.pb.gz").read_bytes()))
    key = len(profile.string_table)
    profile.string_table.extend(["Thread ID", "82848", "82858"])
    for i, s in enumerate(profile.sample):
        label = s.label.add()
        label.key, label.str = key, key + 1 + i % 2
    path = tmp_path / "threads.pprof"
    path.write_bytes(profile.SerializeToString())
    bundle = load(path, options=FRESH)
    assert bundle.sampled is not None
    assert bundle.tree is not None
    threads = bundle.sampled.threads
    assert sorted(threads["name"]) == ["82848", "82858"]
    assert int(threads["samples"].sum()) == len(profile.sample)
    roots = bundle.tree.children(0)
    names = bundle.tree.frames["name"].to_numpy()[bundle.tree.frame[roots]]
    assert sorted(names) == ["82848", "82858"]


def test_go_profile_weighs_the_default_type() -> None:
    bundle = load(PPROF / "fib.pb.gz", options=FRESH)
    assert bundle.sampled is not None
    assert bundle.tree is not None
    assert bundle.sampled.unit == "ns"  # cpu/nanoseconds, the last type (no default named)
    assert bundle.counts["period"] == 10_000_000
    assert bundle.duration_ns > 0
    assert not bundle.warnings  # nothing was repaired


def test_labels_are_counted() -> None:
    bundle = load(PPROF / "profile-with-labels.pb.gz", options=FRESH)
    assert bundle.counts["labels"] > 0


def test_speedscope_sample_loads_under_its_prof_name() -> None:
    """A real Go profile named `.prof` (cProfile's ending): content decides."""
    path = sample("odd/speedscope_pprof_simple.prof")
    assert detect(path) is pprof_loader
    types, sums, n_samples = independent(path)
    bundle = load(path, options=FRESH)
    assert [bundle.counts[t] for t in types] == sums
    assert bundle.counts["samples"] == n_samples


def test_an_all_zero_default_type_gives_way(tmp_path: Path) -> None:
    """A last sample type whose every value is zero would draw an empty flame graph: the
    first type with weight is drawn instead (pprof itself would show the zeros)."""
    from perfview.loaders.pprof_proto import message_class

    profile = message_class().FromString(gzip.decompress((PPROF / "fib.pb.gz").read_bytes()))
    zero = profile.sample_type.add()
    zero.type, zero.unit = len(profile.string_table), len(profile.string_table) + 1
    profile.string_table.extend(["lock_time", "nanoseconds"])
    for s in profile.sample:
        s.value.append(0)
    path = tmp_path / "zero-last.pprof"
    path.write_bytes(profile.SerializeToString())
    bundle = load(path, options=FRESH)
    assert bundle.counts["lock_time/nanoseconds"] == 0
    assert bundle.tree is not None
    assert bundle.tree.metrics["total_ns"][0] == bundle.counts["samples/count"]


def test_plain_and_gzipped_read_the_same(tmp_path: Path) -> None:
    plain = tmp_path / "a"
    plain.write_bytes(gzip.decompress((PPROF / "fib.pb.gz").read_bytes()))
    a, b = load(plain, options=FRESH), load(PPROF / "fib.pb.gz", options=FRESH)
    assert a.counts == b.counts
    assert a.tree is not None
    assert b.tree is not None
    assert np.array_equal(a.tree.metrics["total_ns"], b.tree.metrics["total_ns"])


@pytest.mark.parametrize("cut", [7, 100, 1000])
def test_damaged_files_are_one_sentence(tmp_path: Path, cut: int) -> None:
    data = (PPROF / "profile1.pb").read_bytes()
    path = tmp_path / "cut.pprof"
    path.write_bytes(data[:cut])
    with pytest.raises(LoadError) as info:
        pprof_loader.load(path)
    assert "\n" not in str(info.value)


def test_bad_references_are_one_sentence(tmp_path: Path) -> None:
    from perfview.loaders.pprof_proto import message_class

    profile = message_class().FromString((PPROF / "profile1.pb").read_bytes())
    profile.sample[0].location_id.append(999_999)  # no such location
    path = tmp_path / "bad.pprof"
    path.write_bytes(profile.SerializeToString())
    with pytest.raises(LoadError, match="location it does not hold"):
        pprof_loader.load(path)
    profile = message_class().FromString((PPROF / "profile1.pb").read_bytes())
    profile.function[0].name = 10**6  # past the string table
    path.write_bytes(profile.SerializeToString())
    with pytest.raises(LoadError, match="string table"):
        pprof_loader.load(path)


def test_a_gzip_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bomb.pprof"
    path.write_bytes(gzip.compress(b"\x0a\x04\x08\x01\x10\x02" + b"\x00" * 50_000_000))
    with pytest.raises(LoadError, match="inflates to more than"):
        pprof_loader.load(path)
