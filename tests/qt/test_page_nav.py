"""The page navigation (qt/page_nav.py): the registry's groups on a first row, a group's pages
on a second; every page of every kind of document reachable at 1024 px without scrolling."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from perfview.core.pages import KINDS, PAGES, PageTab
from tests.conftest import sample

pytestmark = pytest.mark.gui

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
# a document tab sits in the window's tab widget: a few pixels of frame on either side
WIDTH_1024 = 1000


def _all_tabs(kind_name: str) -> list[PageTab]:
    """Every tab a kind can show (as if each page had data): the widest navigation."""
    kind = next(k for k in KINDS if k.name == kind_name)
    out = []
    for tab in kind.tabs:
        page = PAGES[tab.page]
        group = page.group if tab.group is None else tab.group
        out.append(PageTab(tab.page, tab.title or page.title, None, group=group or ""))
    return out


def _row_width(bar: Any) -> int:
    return sum(bar.tabSizeHint(i).width() for i in range(bar.count()))


def test_groups_collect_pages_at_their_first_place() -> None:
    from perfview.qt.page_nav import nav_entries

    entries = nav_entries(_all_tabs("torch"))
    titles = [e.title for e in entries]
    assert titles[:4] == ["Overview", "Timeline", "Operators", "Kernels"]
    gpu = next(e for e in entries if e.title == "GPU")
    names = [_all_tabs("torch")[i].name for i in gpu.pages]
    assert names == ["critical-path", "idle", "idle-gaps", "overlap", "launch-delays"]
    flame = next(e for e in entries if e.title == "Flame graphs")
    assert {_all_tabs("torch")[i].name for i in flame.pages} >= {"icicle", "bottom-up", "tree"}
    # every page in exactly one entry
    flat = sorted(i for e in entries for i in e.pages)
    assert flat == list(range(len(_all_tabs("torch"))))
    # a group showing one page is titled by the page (a job's overlap is alone in "GPU")
    job = [e.title for e in nav_entries(_all_tabs("job"))]
    assert "Overlap" in job
    assert "GPU" not in job


@pytest.mark.parametrize("kind", [k.name for k in KINDS])
def test_every_page_is_reachable_at_1024_px_without_scrolling(qtbot: Any, kind: str) -> None:
    from perfview.qt.page_nav import PageNav

    nav = PageNav(_all_tabs(kind))
    qtbot.addWidget(nav)
    nav.resize(WIDTH_1024, 60)
    assert _row_width(nav.groups) <= WIDTH_1024, [e.title for e in nav.entries]
    for at, entry in enumerate(nav.entries):
        nav.groups.setCurrentIndex(at)
        assert nav.pages.count() == len(entry.pages)
        assert nav.pages.isVisibleTo(nav) == (len(entry.pages) > 1)
        assert _row_width(nav.pages) <= WIDTH_1024


def test_clicks_on_either_row_switch_the_document_tab_s_page(qtbot: Any) -> None:
    from perfview.loaders import load
    from perfview.qt.document import Document
    from perfview.qt.document_tab import DocumentTab

    tab = DocumentTab(Document(load(sample(RESNET))))
    qtbot.addWidget(tab)
    names = tab.view_names()
    gpu = next(i for i, e in enumerate(tab.nav.entries) if e.title == "GPU")
    with qtbot.waitSignal(tab.view_changed) as changed:
        tab.nav.groups.setCurrentIndex(gpu)  # what a click on "GPU" does
    assert changed.args == ["critical-path"]  # the group's first page
    assert tab.current_view() == "critical-path"
    in_gpu = [names[i] for i in tab.nav.entries[gpu].pages]
    # no collectives in this trace: no overlap
    assert in_gpu == ["critical-path", "idle", "idle-gaps", "launch-delays"]
    assert tab.nav.pages.isVisibleTo(tab)
    assert tab.nav.pages.count() == 4
    with qtbot.waitSignal(tab.view_changed) as changed:
        tab.nav.pages.setCurrentIndex(3)
    assert changed.args == ["launch-delays"]
    assert tab.show_view("kernels")
    assert tab.current_view() == "kernels"
    assert tab.nav.groups.tabText(tab.nav.groups.currentIndex()) == "Kernels"
    assert not tab.nav.pages.isVisibleTo(tab)  # a page of its own: no second row
    # back to the group: its last page
    tab.nav.groups.setCurrentIndex(gpu)
    assert tab.current_view() == "launch-delays"
    assert names == tab.view_names()
