#!/usr/bin/env python3
"""Write a synthetic cProfile file with N functions (default 10,000) for start-up benchmarks.

    python3 scripts/make_big_pstats.py OUT.prof [--functions N] [--seed S]

The call graph is random (each function called by 1-3 earlier ones, whose recorded calls add
up to its ncalls, as in a real profile) over 400 modules, deep enough that the icicle has many
levels, written in the format `pstats.Stats.dump_stats`
uses (a marshalled dict). Deterministic for a seed. Not a test fixture (too big for git): the
start-up probe (`scripts/bench_gui_probe.py --startup`) opens it.
"""

from __future__ import annotations

import argparse
import marshal
import random
import sys
from pathlib import Path

Func = tuple[str, int, str]


def make_stats(functions: int, seed: int) -> dict[Func, tuple[int, int, float, float, dict]]:
    """pstats' dict: func → (primitive calls, calls, own s, cumulative s, {caller: stats})."""
    rng = random.Random(seed)
    funcs: list[Func] = [("~", 0, "<built-in method builtins.exec>")]
    for i in range(1, functions):
        module = f"/srv/app/pkg{i % 40}/mod{i % 400}.py"
        funcs.append((module, 10 + (i * 7) % 900, f"function_{i}"))
    own = [rng.uniform(1e-5, 5e-3) for _ in funcs]
    calls = [1] + [rng.randint(1, 2000) for _ in funcs[1:]]
    callers: list[dict[Func, tuple[int, int, float, float]]] = [{} for _ in funcs]
    parents: list[list[int]] = [[] for _ in funcs]
    for i in range(1, functions):
        lo = max(0, i - 300)
        for p in {rng.randint(lo, i - 1) for _ in range(rng.randint(1, 3))}:
            parents[i].append(p)
    cum = list(own)
    for i in range(functions - 1, 0, -1):  # children have higher indices: sum bottom-up
        share = cum[i] / len(parents[i])
        for p in parents[i]:
            cum[p] += share
    for i in range(1, functions):  # the callers' counts add up to ncalls, as cProfile's do
        n = len(parents[i])
        calls[i] = max(calls[i], n)
        for k, p in enumerate(parents[i]):
            c = calls[i] // n + (1 if k < calls[i] % n else 0)
            share = c / calls[i]
            callers[i][funcs[p]] = (c, c, own[i] * share, cum[i] * share)
    return {f: (calls[i], calls[i], own[i], cum[i], callers[i]) for i, f in enumerate(funcs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--functions", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args(argv)
    args.out.write_bytes(marshal.dumps(make_stats(args.functions, args.seed)))
    print(f"{args.out}: {args.functions:,} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
