"""cProfile / pstats loader: exact counts against pstats.Stats, refusals of look-alike files."""

from __future__ import annotations

import marshal
import pstats
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from perfview import loaders
from perfview.core.model import schema
from perfview.core.model.errors import EmptyProfile, LoadError, UnknownFormat
from perfview.loaders import cprofile
from tests.conftest import sample

PSTATS_SAMPLES = [
    "pstats/gprof2dot_print1.pstats",
    "pstats/gprof2dot_memtrail.pstats",
    "pstats/hypothesis_csv_combined.prof",
    "pstats/dtu_gabriellanaro_output.prof",
]


def reference(path: Path) -> Any:
    """pstats' own reading of the file (typeshed does not declare its totals)."""
    return pstats.Stats(str(path))


def check_against_pstats(path: Path) -> None:
    bundle = cprofile.load(path)
    stats = reference(path)
    prof = bundle.profile
    assert prof is not None
    assert bundle.format == "pstats"
    assert bundle.counts["functions"] == len(stats.stats)
    assert bundle.counts["calls"] == stats.total_calls == prof.total_calls
    assert bundle.counts["primitive_calls"] == stats.prim_calls == prof.primitive_calls
    assert prof.total_ns == bundle.duration_ns == round(stats.total_tt * 1e9)
    n_edges = sum(len(v[4]) for v in stats.stats.values())
    assert len(prof.edges) == n_edges
    schema.validate(prof.functions, schema.FUNCTIONS)
    schema.validate(prof.edges, schema.EDGES)
    # Per-function numbers, exactly as recorded (function text, file and line kept apart).
    funcs = prof.functions
    index = {
        (f, ln, fn): i
        for i, (f, ln, fn) in enumerate(
            zip(funcs["file"], funcs["line"], funcs["function"], strict=True)
        )
    }
    for key, (cc, nc, tt, ct, _) in list(stats.stats.items())[:200]:
        row = funcs.iloc[index[key]]
        assert (row["ncalls"], row["primitive_calls"]) == (nc, cc)
        assert row["tottime_ns"] == round(tt * 1e9)
        assert row["cumtime_ns"] == round(ct * 1e9)
    assert bundle.tree is not None
    assert bundle.tree.estimated


@pytest.mark.parametrize("rel", PSTATS_SAMPLES)
def test_samples_match_pstats(rel: str) -> None:
    check_against_pstats(sample(rel))


@pytest.mark.parametrize("rel", PSTATS_SAMPLES)
def test_samples_load_under_neutral_name(rel: str, tmp_path: Path) -> None:
    neutral = tmp_path / "unknown"
    shutil.copy(sample(rel), neutral)
    assert loaders.detect(neutral) is cprofile
    bundle = loaders.load(neutral)
    assert bundle.format == "pstats"
    assert bundle.counts["calls"] == reference(neutral).total_calls


def test_builtins_keep_their_text() -> None:
    prof = cprofile.load(sample("pstats/gprof2dot_print1.pstats")).profile
    assert prof is not None
    funcs = prof.functions
    builtin = funcs[funcs["function"] == "<built-in method builtins.exec>"]
    assert builtin["file"].tolist() == ["~"]
    assert builtin["line"].tolist() == [0]


def test_fixture_recursion(data_dir: Path) -> None:
    path = data_dir / "recursion.prof"
    check_against_pstats(path)
    bundle = loaders.load(path)
    prof, tree = bundle.profile, bundle.tree
    assert prof is not None
    assert tree is not None
    funcs = prof.functions.set_index("function")
    assert funcs.loc["fib", "ncalls"] == 1973  # fib(15)
    assert funcs.loc["fib", "primitive_calls"] == 1
    assert funcs.loc["is_even", "ncalls"] == 26
    assert funcs.loc["is_odd", "ncalls"] == 25
    # Recursion is not expanded: fib appears once, below main, with its whole cumtime.
    names = np.array([tree.name(i) for i in range(len(tree))])
    fib_nodes = np.flatnonzero(names == "fib")
    assert len(fib_nodes) == 1
    assert tree.name(int(tree.parent[fib_nodes[0]])) == "main"
    assert tree.metrics["total_ns"][fib_nodes[0]] == pytest.approx(funcs.loc["fib", "cumtime_ns"])
    # Mutual recursion: is_even → is_odd, and no is_even below is_odd.
    odd = np.flatnonzero(names == "is_odd")
    assert [tree.name(int(tree.parent[i])) for i in odd] == ["is_even"]
    assert not any(names[tree.children(int(i))].tolist() for i in odd)


def test_python2_file_is_refused() -> None:
    path = sample("odd/gprof2dot_py2_cProfile.pstats")
    with pytest.raises(LoadError, match="Python 2 cProfile file"):
        loaders.load(path)
    with pytest.raises(LoadError, match="written by Python 3"):
        cprofile.load(path)


def test_go_pprof_is_not_read_as_cprofile(tmp_path: Path) -> None:
    """A Go profile named `.prof` opens as pprof (tests/loaders/test_pprof.py); the cProfile
    loader itself still names it when forced to read it."""
    path = sample("odd/speedscope_pprof_simple.prof")
    assert loaders.detect(path).NAME == "pprof"
    with pytest.raises(LoadError, match="Go pprof"):
        cprofile.load(path)


def test_ghc_profile_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "Main.prof"
    path.write_text(
        "\tWed Jan  1 12:00 2020 Time and Allocation Profiling Report  (Final)\n\n"
        "\t   Main +RTS -p -RTS\n\n"
        "\ttotal time  =        0.01 secs   (5 ticks @ 1000 us, 1 processor)\n"
    )
    with pytest.raises(UnknownFormat, match="GHC"):
        loaders.load(path)


def test_marshal_that_is_not_pstats(tmp_path: Path) -> None:
    path = tmp_path / "other.prof"
    path.write_bytes(marshal.dumps({(1, 2): 3}))
    assert cprofile.sniff(path.read_bytes()[:16], path)
    with pytest.raises(LoadError, match="not a cProfile profile"):
        cprofile.load(path)


def test_empty_stats(tmp_path: Path) -> None:
    path = tmp_path / "empty.prof"
    path.write_bytes(marshal.dumps({}))
    with pytest.raises(EmptyProfile):
        cprofile.load(path)


def test_sniff_leaves_json_alone() -> None:
    assert not cprofile.sniff(b'{"traceEvents": []}', Path("x.json"))
    assert not cprofile.sniff(b"[{}]", Path("x.json"))
    assert cprofile.sniff(marshal.dumps({("a", 1, "f"): (1, 1, 0.0, 0.0, {})}), Path("x"))
