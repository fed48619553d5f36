"""The tiny program profiled into `example.prof`, the profile perfview opens when started bare.

It is deliberately small but has the shapes worth seeing in a viewer: a deep call chain,
recursion (so primitive calls < calls), a hot inner loop, and some standard-library work.
Regenerate the profile with:

    cd perfview/resources/examples && python3 example_program.py
"""

from __future__ import annotations

import cProfile
import json
import marshal
import random
import re
import statistics
from pathlib import Path

WORD = re.compile(r"[a-z]+")


def make_records(n: int, rng: random.Random) -> list[dict[str, object]]:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    return [
        {"id": i, "name": " ".join(rng.choices(words, k=4)), "value": rng.random() * 100}
        for i in range(n)
    ]


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def tokenize(records: list[dict[str, object]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        for word in WORD.findall(str(record["name"])):
            counts[word] = counts.get(word, 0) + 1
    return counts


def summarize(records: list[dict[str, object]]) -> dict[str, float]:
    values = [float(r["value"]) for r in records]  # type: ignore[arg-type]
    return {
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.pstdev(values),
    }


def sort_records(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return sorted(records, key=lambda r: (str(r["name"]), float(r["value"])))  # type: ignore[arg-type]


def report(records: list[dict[str, object]]) -> str:
    ordered = sort_records(records)
    payload = {"summary": summarize(records), "words": tokenize(records), "top": ordered[:20]}
    return json.dumps(payload, indent=2)


def main() -> int:
    rng = random.Random(42)
    records = make_records(20_000, rng)
    text = report(records)
    return len(text) + fib(20)


def _short(filename: str) -> str:
    """Strip machine-specific folders from file names so the shipped profile has none."""
    if filename.startswith("~") or filename.startswith("<"):
        return filename
    path = Path(filename)
    if path.name == Path(__file__).name:
        return path.name
    parts = path.parts
    for i, part in enumerate(parts):
        if part.startswith("python3"):
            return "/".join(("lib", *parts[i:]))
    return path.name


def _rename(stats: dict) -> dict:  # type: ignore[type-arg]
    def key(k: tuple[str, int, str]) -> tuple[str, int, str]:
        return (_short(k[0]), k[1], k[2])

    return {
        key(k): (cc, nc, tt, ct, {key(c): v for c, v in callers.items()})
        for k, (cc, nc, tt, ct, callers) in stats.items()
    }


if __name__ == "__main__":
    profiler = cProfile.Profile()
    profiler.runcall(main)
    profiler.create_stats()
    with open(Path(__file__).with_name("example.prof"), "wb") as fh:
        marshal.dump(_rename(profiler.stats), fh)  # the format pstats.Stats.dump_stats writes
