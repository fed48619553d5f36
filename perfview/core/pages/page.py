"""The records of the page registry: `Page` (one page, declared once), `Tab` and `Kind` (which
pages a kind of document shows, in order), and `ViewError`. No entries here: those are in
`registry.py`, so this module imports nothing but the model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError

TableFn = Callable[[Bundle], pd.DataFrame]
HasData = Callable[[Bundle], bool]
Tables = Mapping[str, pd.DataFrame]
Prepare = Callable[[Bundle, Tables], Any]


class ViewError(LoadError):
    """The view does not exist or does not apply to this file; `str()` is one user sentence.

    A LoadError subclass so callers that already turn LoadError into "exit 2, one line" need
    nothing new.
    """


def _always(_bundle: Bundle) -> bool:
    return True


@dataclass(frozen=True)
class Page:
    """One page: its CLI table per format, when it has data, its off-thread data, its widget."""

    name: str
    title: str
    description: str
    tables: Mapping[str, TableFn] = field(default_factory=dict)
    has_data: HasData = _always
    widget: str | None = "table"  # key of the GUI's builder table; None: CLI only
    prepare: Prepare | None = None  # data computed off the GUI thread for the widget
    prepare_when: HasData = _always  # the bundles `prepare` has work for
    shown_when: HasData = _always  # graphics pages: the bundles they have anything to draw for
    # One sentence: the window and definition of a figure whose meaning is not obvious (idle,
    # overlap), shown as the page's caption and printed by `summary --view`, so a user who
    # checks with another tool (HTA) sees why the numbers differ.
    definition: str = ""


@dataclass(frozen=True)
class Tab:
    """A page's place in one kind of document. `table`: the load worker precomputes the
    page's CLI table when this tab comes first (it is what the tab opens on)."""

    page: str
    title: str | None = None  # None: the page's own title
    table: bool = False


@dataclass(frozen=True)
class Kind:
    """A kind of document and its tabs, in order. The first kind whose `matches` holds wins."""

    name: str
    matches: HasData
    tabs: tuple[Tab, ...]


__all__ = ["HasData", "Kind", "Page", "Prepare", "Tab", "TableFn", "Tables", "ViewError"]
