"""bench_load.py's printing: machine facts, the legend, one text row per measurement, and the
same rows as a Markdown table for the README's Performance section.

A row is the dict bench_load.measure_row returns: shape, size, file_mb, events, copies,
load_before/after (1-minute load average), and one dict per contender (pv_proc, pv_load, hta,
optionally reopen, base) of medians: wall (spawn to exit), cpu (user+sys of the child), rss_mb
(peak RSS of the child), seconds (the child's own timer around the load). A contender that
failed has an empty dict, shown blank.
"""

from __future__ import annotations

import math
from typing import Any

NAN = math.nan
GOAL_X, GOAL_MBS, GOAL_RSS = 15.0, 300.0, 2.0

LEGEND = """\
summary: `perfview summary FILE` as a fresh whole process (cache off): wall from spawn to exit,
         its CPU s (user+sys) and peak RSS (os.wait4); MB/s = file / wall
load:    perfview.loaders.load(FILE, FRESH) alone, timed inside a child (imports and numba's
         start-up excluded)
HTA:     a fresh process that imports HTA and runs parse_trace_dataframe(FILE): 'proc' is its
         wall from spawn to exit, 'load' the parse alone timed inside it (the same runs), CPU s
         and peak RSS as for summary
xproc:   HTA proc / perfview summary (both whole processes); xload: HTA load / perfview load
goals (issue 20, at 1 GB): xproc >= 15, summary >= 300 MB/s, summary RSS <= 2x the file
loadavg: the 1-minute load average before -> after the row (2 cores: above ~0.5 others ran)
reopen, json+DF (--reopen, --baseline): perfview's reopen through its cache; json.load+DataFrame
Each file is read once before each timed run (page cache warm). Replicas are compact JSON."""


def _get(row: dict[str, Any], who: str, key: str) -> float:
    value = row.get(who, {}).get(key, NAN)
    return float(value) if value is not None else NAN


def figures(row: dict[str, Any]) -> dict[str, float]:
    """The derived figures of a row (NaN where a contender is missing)."""
    mb = row["file_mb"]
    pv_wall, pv_load = _get(row, "pv_proc", "wall"), _get(row, "pv_load", "seconds")
    hta_wall, hta_load = _get(row, "hta", "wall"), _get(row, "hta", "seconds")
    return {
        "pv_wall": pv_wall,
        "pv_cpu": _get(row, "pv_proc", "cpu"),
        "pv_mbs": mb / pv_wall,
        "pv_rss": _get(row, "pv_proc", "rss_mb"),
        "pv_rss_x": _get(row, "pv_proc", "rss_mb") / mb,
        "load": pv_load,
        "load_mbs": mb / pv_load,
        "hta_wall": hta_wall,
        "hta_load": hta_load,
        "hta_cpu": _get(row, "hta", "cpu"),
        "hta_rss": _get(row, "hta", "rss_mb"),
        "x_proc": hta_wall / pv_wall,
        "x_load": hta_load / pv_load,
        "reopen": _get(row, "reopen", "seconds"),
        "base": _get(row, "base", "seconds"),
    }


def goals(f: dict[str, float]) -> str:
    """'ok', or the goals this row misses (a NaN figure counts as unchecked, '?')."""
    checks = (
        (f["x_proc"], f["x_proc"] >= GOAL_X, f"x{f['x_proc']:.0f}<{GOAL_X:.0f}"),
        (f["pv_mbs"], f["pv_mbs"] >= GOAL_MBS, f"{f['pv_mbs']:.0f}MB/s"),
        (f["pv_rss_x"], f["pv_rss_x"] <= GOAL_RSS, f"RSS{f['pv_rss_x']:.1f}x"),
    )
    missed = ["?" if math.isnan(v) else text for v, ok, text in checks if not ok]
    return " ".join(missed) if missed else "ok"


def _n(value: float, fmt: str) -> str:
    return "" if math.isnan(value) else format(value, fmt)


def print_header(facts: dict[str, Any], repeat: int, hta_runs: str, est: float) -> None:
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(LEGEND)
    print(f"runs per figure: perfview {repeat}, HTA {hta_runs}")
    print(f"estimated total: ~{est / 60:.0f} min")


HEAD = (
    f"{'shape':<9} {'MB':>6} {'events':>10} | {'summary':>7} {'cpu s':>6} {'MB/s':>5}"
    f" {'RSS MB':>6} {'xfile':>5} | {'load s':>6} {'MB/s':>5} | {'HTA proc':>8} {'load':>6}"
    f" {'cpu s':>6} {'RSS MB':>6} | {'xproc':>5} {'xload':>5} | {'goals':<22} {'loadavg':>10}"
)


def print_row(row: dict[str, Any], first: bool = False) -> None:
    if first:
        print(HEAD + "   reopen  json+DF")
    f = figures(row)
    print(
        f"{row['shape']:<9} {row['file_mb']:6.0f} {row['events']:10,d} |"
        f" {_n(f['pv_wall'], '7.2f'):>7} {_n(f['pv_cpu'], '6.2f'):>6} {_n(f['pv_mbs'], '5.0f'):>5}"
        f" {_n(f['pv_rss'], '6.0f'):>6} {_n(f['pv_rss_x'], '5.2f'):>5} |"
        f" {_n(f['load'], '6.2f'):>6} {_n(f['load_mbs'], '5.0f'):>5} |"
        f" {_n(f['hta_wall'], '8.2f'):>8} {_n(f['hta_load'], '6.2f'):>6}"
        f" {_n(f['hta_cpu'], '6.2f'):>6}"
        f" {_n(f['hta_rss'], '6.0f'):>6} | {_n(f['x_proc'], '5.1f'):>5}"
        f" {_n(f['x_load'], '5.1f'):>5} | {goals(f):<22}"
        f" {row['load_before']:4.1f}->{row['load_after']:<4.1f}"
        f" {_n(f['reopen'], '8.2f'):>8} {_n(f['base'], '8.2f'):>8}",
        flush=True,
    )


def _size(mb: float) -> str:
    return f"{mb / 1000:.2g} GB" if mb >= 999 else f"{mb:.0f} MB"


def print_markdown(facts: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """The rows as a Markdown table, with the machine line and the legend under it."""
    print(
        "\n| shape | size | events | `perfview summary`, whole process | peak RSS (× file)"
        " | perfview load only | HTA's parser, whole process | HTA parse only | HTA peak RSS"
        " | HTA ÷ perfview: whole / load only | goals at 1 GB | load avg |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        f = figures(row)
        print(
            f"| {row['shape']} | {_size(row['file_mb'])} | {row['events'] / 1e6:.2f}M"
            f" | {_n(f['pv_wall'], '.2f')} s ({_n(f['pv_mbs'], '.0f')} MB/s)"
            f" | {_n(f['pv_rss'], ',.0f')} MB ({_n(f['pv_rss_x'], '.2f')}×)"
            f" | {_n(f['load'], '.2f')} s ({_n(f['load_mbs'], '.0f')} MB/s)"
            f" | {_n(f['hta_wall'], '.1f')} s | {_n(f['hta_load'], '.1f')} s"
            f" | {_n(f['hta_rss'], ',.0f')} MB"
            f" | {_n(f['x_proc'], '.1f')}× / {_n(f['x_load'], '.1f')}×"
            f" | {goals(f) if row['file_mb'] >= 999 else '–'}"
            f" | {row['load_before']:.1f} → {row['load_after']:.1f} |"
        )
    keys = ("cpu", "usable cores", "memory GB", "python", "perfview commit", "hta", "date")
    print("\n" + "; ".join(f"{k} {facts.get(k)}" for k in keys))


def print_all(facts: dict[str, Any], rows: list[dict[str, Any]], markdown: bool) -> None:
    print("machine: " + ", ".join(f"{k} {v}" for k, v in facts.items()))
    print(LEGEND)
    for i, row in enumerate(rows):
        print_row(row, first=i == 0)
    if markdown:
        print_markdown(facts, rows)


if __name__ == "__main__":  # a module of another benchmark: running it only answers --help
    import argparse

    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
