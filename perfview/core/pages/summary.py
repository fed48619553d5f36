"""View name → table: what `perfview summary --view` prints, read from the page registry.

The views are the pages of `perfview.core.pages` that have a table (`VIEWS`); this module adds
the CLI's side: which view a format opens on, which views a bundle has, and `summarize`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from perfview.core.model import Bundle, units
from perfview.core.pages import PAGES, Page, ViewError

# Every page that prints a table is a view (graphics-only pages are not).
VIEWS: dict[str, Page] = {name: page for name, page in PAGES.items() if page.tables}
View = Page  # the record type of `VIEWS`

# How messages name each format ("FILE is a cProfile profile").
FORMAT_PHRASES: dict[str, str] = {
    "pstats": "a cProfile profile",
    "trace": "a trace",
    "mprof": "an mprof memory recording",
    "memprof_text": "a memory_profiler line report",
    "scalene": "a Scalene profile",
    "cuda_snapshot": "a CUDA memory snapshot",
    "memray": "a memray capture",
    "sampled": "a sampled profile",
    "job": "a multi-rank job",
    "logdir": "a profile log directory",
}


# The most useful first view per format (a trace without cpu_op falls back to slices by name).
DEFAULT_VIEWS: dict[str, str] = {
    "pstats": "functions",
    "trace": "ops",
    "mprof": "memory",
    "memprof_text": "lines",
    "scalene": "lines",
    "cuda_snapshot": "segments",
    "memray": "allocations",
    "sampled": "functions",
    "job": "ranks",
    "logdir": "runs",
}


def shown_counts(counts: dict[str, int]) -> list[tuple[str, int, str]]:
    """A bundle's nonzero counts as (name, number, note) for a header or status line.

    A trace's loader counts complete and B/E slices (`slices`) apart from async ones
    (`async`); the SQL `slices` table holds both, so the shown `slices` is their sum, noted
    with how many are async, and matches `SELECT count(*) FROM slices`. (The JSON output keeps
    the loader's counts as they are.)
    """
    out: list[tuple[str, int, str]] = []
    folded = "slices" in counts and counts.get("async", 0) > 0
    for name, value in counts.items():
        if not value or (folded and name == "async"):
            continue
        if folded and name == "slices":
            out.append((name, int(value) + int(counts["async"]), f"{counts['async']:,} async"))
        else:
            out.append((name, int(value), ""))
    return out


def count_text(name: str, value: int, note: str = "") -> str:
    """One shown count as words: '4,855 events', a byte count in its unit ('2.14 GiB active',
    not '2,297,283,072 active bytes'), its note in brackets."""
    words = name.replace("_", " ")
    if words.endswith(" bytes"):
        text = f"{units.format_bytes(value)} {words.removesuffix(' bytes')}"
    else:
        text = f"{value:,} {words}"
    return text + (f" ({note})" if note else "")


def default_view(bundle: Bundle) -> str:
    """The view to show first for this bundle's format (the first view with data only for a
    format without a default: asking every view whether it has data costs a pass each)."""
    name = DEFAULT_VIEWS.get(bundle.format)
    if name is not None:
        return name
    return next((n for n in applicable_views(bundle) if VIEWS[n].has_data(bundle)), "ops")


def views_for(format_name: str) -> list[str]:
    """Every view with a table for this format (e.g. "job"), in registry order."""
    return [name for name, view in VIEWS.items() if format_name in view.tables]


def applicable_views(bundle: Bundle) -> list[str]:
    """Every view that understands this bundle's format, in registry order (data or not)."""
    return views_for(bundle.format)


def available_views(bundle: Bundle) -> list[str]:
    """The views worth showing for this bundle: its format fits and there is data for them."""
    return [name for name in applicable_views(bundle) if VIEWS[name].has_data(bundle)]


def summarize(bundle: Bundle, view: str | None = None, edits: Sequence[str] = ()) -> pd.DataFrame:
    """The table for `view` (default: `default_view(bundle)`), under `edits` for a page that
    takes them (what-if); ViewError when it does not apply."""
    name = view or default_view(bundle)
    spec = VIEWS.get(name)
    if spec is None:
        known = ", ".join(VIEWS)
        raise ViewError(f"there is no view {name!r} (views: {known})")
    table = spec.tables.get(bundle.format)
    if table is None:
        needs = " or ".join(FORMAT_PHRASES.get(f, f) for f in spec.tables)
        what = FORMAT_PHRASES.get(bundle.format, f"a {bundle.format} file")
        fits = ", ".join(applicable_views(bundle)) or "none"
        raise ViewError(f"view {name!r} needs {needs}; {bundle.path} is {what} (its views: {fits})")
    if edits and spec.edited is None:
        takes = ", ".join(n for n, v in VIEWS.items() if v.edited is not None)
        raise ViewError(f"--edit applies to --view {takes} only, not {name!r}")
    if spec.edited is not None:
        return spec.edited(bundle, tuple(edits))
    return table(bundle)


# Re-exported: the CLI's table output reads units through the summary module.
column_unit = units.column_unit


__all__ = [
    "DEFAULT_VIEWS",
    "FORMAT_PHRASES",
    "VIEWS",
    "View",
    "ViewError",
    "applicable_views",
    "available_views",
    "column_unit",
    "count_text",
    "default_view",
    "shown_counts",
    "summarize",
    "views_for",
]
