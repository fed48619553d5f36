"""A document's page navigation: one tab per group of pages, the group's pages on a second row.

A trace shows up to 18 pages; one row of 18 tabs needs ~1900 px, so at 1024 px a third of them
were reachable only through the tab bar's scroll arrows. The page registry gives each page a
group (`Page.group`, overridable per kind by `Tab.group`): the first row has one entry per group
(or per ungrouped page), in the order of its first page, and the second row, shown only for a
group of several pages, has that group's pages. The pages themselves stay in one flat, ordered
list (the `QTabWidget` of `DocumentTab`, its own bar hidden): `PageNav` only turns a click into
a flat index (`page_chosen`) and follows the current one (`follow`), so everything that selects
pages by index or by name works as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QTabBar, QVBoxLayout, QWidget

from perfview.core.pages import PageTab

# the second row as segments: no tab frames, the current page underlined
_SEGMENTS = (
    "QTabBar#pageNavPages::tab { padding: 3px 12px; margin: 0 2px; border: none;"
    " border-bottom: 2px solid transparent; }"
    " QTabBar#pageNavPages::tab:selected { border-bottom: 2px solid palette(highlight);"
    " color: palette(highlight); }"
    " QTabBar#pageNavPages::tab:hover { background: palette(midlight); }"
)


@dataclass(frozen=True)
class NavEntry:
    """One entry of the first row: its title and the flat indexes of its pages, in order."""

    title: str
    pages: tuple[int, ...]


def nav_entries(tabs: Sequence[PageTab]) -> list[NavEntry]:
    """The first row's entries for a document's tabs: a group of pages at the place of its
    first page, titled by the group; an ungrouped page, or a group showing one page, by the
    page's own title. Pure (no widget), so a test reads the navigation directly."""
    order: list[str] = []
    members: dict[str, list[int]] = {}
    for index, tab in enumerate(tabs):
        key = tab.group or f"\0{index}"  # an ungrouped page is a group of its own
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(index)
    out = []
    for key in order:
        pages = tuple(members[key])
        title = tabs[pages[0]].title if len(pages) == 1 or key.startswith("\0") else key
        out.append(NavEntry(title, pages))
    return out


class PageNav(QWidget):
    """The two rows of page tabs. `page_chosen(index)`: the user picked the flat page `index`."""

    page_chosen = Signal(int)

    def __init__(self, tabs: Sequence[PageTab], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entries = nav_entries(tabs)
        self._titles = [tab.title for tab in tabs]
        self._last: dict[int, int] = {}  # entry → the page last shown in it
        self._following = False
        self.groups = QTabBar(self)
        self.groups.setDocumentMode(True)
        self.groups.setExpanding(False)
        self.groups.setUsesScrollButtons(True)  # only ever needed below ~700 px
        for entry in self.entries:
            at = self.groups.addTab(entry.title)
            if len(entry.pages) > 1:
                names = ", ".join(self._titles[i] for i in entry.pages)
                self.groups.setTabToolTip(at, f"{entry.title}: {names}")
        self.pages = QTabBar(self)
        self.pages.setDocumentMode(True)
        self.pages.setExpanding(False)
        self.pages.setDrawBase(False)
        self.pages.setObjectName("pageNavPages")
        self.pages.setStyleSheet(_SEGMENTS)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.groups)
        layout.addWidget(self.pages)
        self.groups.currentChanged.connect(self._on_group)
        self.pages.currentChanged.connect(self._on_page)
        self._fill_pages(0)

    def follow(self, index: int) -> None:
        """Show flat page `index` as the current one (the pages changed by other means)."""
        at = self._entry_of(index)
        if at < 0:
            return
        self._following = True
        try:
            self.groups.setCurrentIndex(at)
            self._fill_pages(at)
            self.pages.setCurrentIndex(self.entries[at].pages.index(index))
            self._last[at] = index
        finally:
            self._following = False

    def _entry_of(self, index: int) -> int:
        return next((i for i, e in enumerate(self.entries) if index in e.pages), -1)

    def _fill_pages(self, at: int) -> None:
        """The second row: entry `at`'s pages, hidden when it has only one."""
        was, self._following = self._following, True
        try:
            while self.pages.count():
                self.pages.removeTab(0)
            pages = self.entries[at].pages if 0 <= at < len(self.entries) else ()
            for index in pages:
                self.pages.addTab(self._titles[index])
            self.pages.setVisible(len(pages) > 1)
        finally:
            self._following = was

    def _on_group(self, at: int) -> None:
        if self._following or not 0 <= at < len(self.entries):
            return
        index = self._last.get(at, self.entries[at].pages[0])
        self.follow(index)  # the second row at once, whoever listens
        self.page_chosen.emit(index)

    def _on_page(self, position: int) -> None:
        if self._following:
            return
        at = self.groups.currentIndex()
        if 0 <= at < len(self.entries) and 0 <= position < len(self.entries[at].pages):
            self.page_chosen.emit(self.entries[at].pages[position])


__all__ = ["NavEntry", "PageNav", "nav_entries"]
