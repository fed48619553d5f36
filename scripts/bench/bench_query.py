#!/usr/bin/env python3
"""Query benchmark: `perfview query`'s DuckDB path on a big synthetic kineto trace.

    python scripts/bench/bench_query.py [--size 300] [--repeat 5] [--workdir DIR]

Generates a trace of SIZE MB with scripts/bench/bench_load.py's generator (shifted copies of the
resnet50 kineto sample), loads it once, then times the issue's query

    SELECT name, count(*), sum(dur) FROM slices GROUP BY 1 ORDER BY 3 DESC LIMIT 20

(median of --repeat runs, after one warm-up run), side by side with:
- the same query on the raw categorical columns (DuckDB ENUM; `slices` casts name to text so
  ORDER BY sorts by the text: this shows what the cast costs),
- pandas' groupby on the events frame (what perfview's own tables use),
- opening the session (registering the tables: references, no copy) and building the lazy
  `kernels` and `args` tables on first use.
Peak RSS of the process is printed too; it is mostly the loaded trace.

Not part of CI. The default 300 MB keeps it within this project's shared machines; on a
workstation, --size 1000 is the 1 GB case.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "bench"))

import bench_load  # noqa: E402  (scripts/bench/ is not a package)

SQL = "SELECT name, count(*), sum(dur) FROM slices GROUP BY 1 ORDER BY 3 DESC LIMIT 20"
SQL_ENUM = "SELECT name, count(*), sum(dur) FROM _raw_slices GROUP BY 1 ORDER BY 3 DESC LIMIT 20"


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median seconds of `repeat` runs after one warm-up, and the last result."""
    result = fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def once(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=300, help="trace size in MB")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (median)")
    parser.add_argument("--source", type=Path, default=bench_load.DEFAULT_SOURCE)
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the generated trace here")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        print(f"bench_query: source trace {args.source} not found", file=sys.stderr)
        return 2

    from perfview.core.analysis import query
    from perfview.loaders import FRESH, load

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="perfview-bench-query-"))
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"query_{int(args.size)}mb.json"
    if not path.exists():
        bench_load.make_trace(args.source, args.size, path)
    load_s, bundle = once(lambda: load(str(path), options=FRESH))
    tl = bundle.timeline
    events = tl.events
    print(f"trace {path.stat().st_size / 1e6:,.0f} MB: {len(events):,} slices, load {load_s:.2f} s")

    open_s, session = once(lambda: query.QuerySession(bundle))
    sql_s, top = timed(lambda: session.run(SQL), args.repeat)
    enum_s, _ = timed(lambda: session.run(SQL_ENUM), args.repeat)

    def pandas_way() -> Any:
        g = events.groupby("name", observed=True)["dur"].agg(["size", "sum"])
        return g.sort_values("sum", ascending=False).head(20)

    pandas_s, top_pd = timed(pandas_way, args.repeat)
    assert top.iloc[:, 2].tolist() == top_pd["sum"].tolist(), "DuckDB and pandas disagree"
    kernels_s, _ = once(lambda: session.run("SELECT count(*) FROM kernels"))
    args_s, _ = once(lambda: session.run("SELECT count(*) FROM args"))
    # search (core.search, the timeline's Ctrl+F) over names and args, DuckDB as the peer
    from perfview.core.analysis.search import search_rows

    names = pd.Categorical(events["name"])
    cats, codes = np.asarray(names.categories, dtype=object), np.asarray(names.codes)
    text_s, hits = timed(lambda: search_rows("conv2d", cats, codes, tl.args), args.repeat)
    like = "SELECT count(*) FROM args a JOIN slices s ON s.id = a.slice WHERE "
    like += "a.args ILIKE '%conv2d%' OR s.name ILIKE '%conv2d%'"
    duck_text_s, duck_hits = timed(lambda: session.run(like), args.repeat)
    kv_s, kv = timed(lambda: search_rows("External id=4242", cats, codes, tl.args), args.repeat)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    rows = [
        ("open session (register tables)", open_s),
        ("top-20 names, slices (name as text)", sql_s),
        ("same, raw ENUM column", enum_s),
        ("pandas groupby(observed=True)", pandas_s),
        ("first query on kernels (builds it)", kernels_s),
        ("first query on args (decodes JSON text)", args_s),
        (f"search 'conv2d' in names+args ({len(hits):,} slices)", text_s),
        (f"same in DuckDB, ILIKE on args ({int(duck_hits.iloc[0, 0]):,})", duck_text_s),
        (f"search 'External id=4242' ({len(kv)} slice)", kv_s),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'what':<{width}}  seconds")
    for label, seconds in rows:
        print(f"{label:<{width}}  {seconds:7.3f}")
    print(f"peak RSS {rss:,.0f} MB")
    print(top.head(5).to_string())
    if not args.workdir:
        path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
