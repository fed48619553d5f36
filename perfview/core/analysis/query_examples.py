"""Ready-made queries for the Query page's Examples menu (and a test runs each on real traces).

Each is a starting point the user edits, so each says in a comment what to change. They only
use the tables of `analysis.query`; which tables a file has decides which examples fit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    title: str
    sql: str
    needs: tuple[str, ...]  # tables the query reads


EXAMPLES: tuple[Example, ...] = (
    Example(
        "Top kernels inside a user annotation",
        """-- GPU kernels by the user annotation (or ProfilerStep) whose code launched them:
-- climbs from each kernel's runtime call up its parents. Edit the LIKE pattern.
WITH RECURSIVE up(kernel, slice) AS (
    SELECT id, runtime FROM kernels WHERE runtime >= 0
    UNION ALL
    SELECT up.kernel, s.parent FROM up JOIN slices s ON s.id = up.slice WHERE s.parent >= 0
)
SELECT a.name AS annotation, k.name AS kernel, count(*) AS calls, sum(k.dur) AS total_ns
FROM up
JOIN slices a ON a.id = up.slice AND a.kind = 'annotation'
JOIN kernels k ON k.id = up.kernel
WHERE a.name LIKE '%'
GROUP BY ALL
ORDER BY total_ns DESC
LIMIT 50""",
        ("kernels", "slices"),
    ),
    Example(
        "Ops between two markers",
        """-- CPU ops that start and end between two instant markers. Edit the names; by
-- default the first and the last marker of the trace.
WITH m AS (
    SELECT min(ts) AS t0, max(ts) AS t1 FROM instants
    -- WHERE name IN ('first marker', 'second marker')
)
SELECT o.name, count(*) AS calls, sum(o.dur) AS total_ns, max(o.dur) AS max_ns
FROM ops o, m
WHERE o.ts >= m.t0 AND o.ts + o.dur <= m.t1
GROUP BY 1
ORDER BY total_ns DESC
LIMIT 50""",
        ("ops", "instants"),
    ),
    Example(
        "Longest gaps on a GPU stream",
        """-- Idle time between consecutive GPU activities of each stream, longest first.
SELECT device, stream, prev_end AS gap_start, ts AS gap_end, ts - prev_end AS gap_ns,
       name AS next_kernel
FROM (
    SELECT device, stream, ts, name,
           max(ts + dur) OVER (PARTITION BY device, stream ORDER BY ts
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM kernels
)
WHERE ts > prev_end
ORDER BY gap_ns DESC
LIMIT 50""",
        ("kernels",),
    ),
    Example(
        "Where the time goes, by name",
        """SELECT name, kind, count(*) AS calls, sum(dur) AS total_ns, max(dur) AS max_ns
FROM slices
GROUP BY ALL
ORDER BY total_ns DESC
LIMIT 50""",
        ("slices",),
    ),
    Example(
        "Argument keys, then one key's values",
        """-- Which keys the slices' args (JSON text) have. To read one key's values, use
-- SELECT s.name, a.args->>'Input Dims' FROM args a JOIN slices s ON s.id = a.slice
SELECT key, count(*) AS slices, any_value(a.args->>key) AS example
FROM args a, unnest(json_keys(a.args)) AS t(key)
GROUP BY key
ORDER BY slices DESC""",
        ("args",),
    ),
    Example(
        "Slowest functions (cProfile)",
        """SELECT function, file, line, ncalls, tottime_ns, cumtime_ns
FROM functions
ORDER BY tottime_ns DESC
LIMIT 50""",
        ("functions",),
    ),
)


def examples_for(tables: list[str] | tuple[str, ...]) -> list[Example]:
    """The examples whose tables this file has."""
    have = set(tables)
    return [e for e in EXAMPLES if set(e.needs) <= have]


__all__ = ["EXAMPLES", "Example", "examples_for"]
