"""The store: every cache perfview keeps on disk, behind one interface, outside the loaders.

Loaders parse; they keep nothing. What a parse or a page produced and a reopen can skip lives
here, in one folder (`parsed_columns.cache_dir()`, `PERFVIEW_CACHE_DIR`), one entry per
folder, every entry a checksummed artifact folder (`artifacts`) written once its gate opens
(`write_gates`) and evicted least recently used first:

- `parsed_columns`: a big trace's parsed columns, keyed by path, size, mtime and the loaders' code;
- `layout_entries`: the Timeline's layout beside them;
- `overview_entries`: the Overview's tables and findings beside them;
- job reductions (`perfview.jobs.reductions`), keyed the same way.

Page data is kept by *entry kinds* (`derived_entries.DerivedCache`): a page of the registry
names the kind that keeps its data (`Page.stored`), and `PAGE_ENTRIES` maps that name to the
functions that read or make it, so the document owner (`perfview.documents`) prepares a page
the same way whichever cache stands behind it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from perfview.core.model import Bundle
from perfview.store.write_gates import WriteGate


@dataclass(frozen=True)
class PageEntry:
    """How the store keeps one kind of page data.

    `first(bundle, gate)`: the data a load prepares for the page a tab opens on, read from the
    store or computed and stored once `gate` opens; None when the store does not keep it for
    this bundle (the page then computes it as usual). `complete(bundle, data)`: the rest of
    data drawn partial (the Overview's findings), read or stored likewise."""

    first: Callable[[Bundle, WriteGate | None], Any]
    complete: Callable[[Bundle, Any], Any] | None = None


def _layout_first(bundle: Bundle, gate: WriteGate | None) -> Any:
    from perfview.store import layout_entries

    if bundle.timeline is None or not layout_entries.cacheable(bundle):
        return None
    if gate is not None:
        return layout_entries.timeline_data(bundle, gate)
    return layout_entries.get(bundle.path, bundle.timeline)


def _overview_first(bundle: Bundle, gate: WriteGate | None) -> Any:
    from perfview.store import overview_entries
    from perfview.store.write_gates import NOW

    return overview_entries.overview_data(bundle, gate if gate is not None else NOW)


def _overview_complete(bundle: Bundle, data: Any) -> Any:
    from perfview.store import overview_entries

    return overview_entries.with_findings(bundle, data)


PAGE_ENTRIES: dict[str, PageEntry] = {
    "layout": PageEntry(_layout_first),
    "overview": PageEntry(_overview_first, _overview_complete),
}


def page_entry(kind: str | None) -> PageEntry | None:
    """The store's entry kind `kind` (a `Page.stored`); None for a page the store does not keep."""
    return PAGE_ENTRIES.get(kind) if kind is not None else None


__all__ = ["PAGE_ENTRIES", "PageEntry", "WriteGate", "page_entry"]
