"""The tab for one open document: a warnings bar and one sub-tab per page of its kind.

The sub-tabs are chosen in a two-row navigation by the pages' groups (`qt/page_nav.py`); the
pages stay one flat `QTabWidget` (`tabs`, its own bar hidden), indexed as `view_names()`.

Which pages a document shows, and in which order, comes from the page registry
(`perfview.core.pages.tabs_for`), a pure function the load worker also asks which summary
tables to precompute. Pages are built lazily, the first time their sub-tab is shown, by the
registry's widget builders (`perfview.qt.page_widgets.BUILDERS`): a trace's Timeline is not
paid for when the user only wants the Ops table. A page that fails to build shows its error in
place; the rest of the tab works.

Pages with heavy data (timeline geometry, torch Overview/Kernels/Memory/Recommendations) never
compute it on the GUI thread when the user switches to them: the page shows "Preparing…" while a
worker task computes the data (`pages.prepare`), then builds its widgets from it. The load task
prepares the first page (`documents.plan.first_pages`), so a new tab appears drawn; the pages
marked `ahead` in the registry (the Timeline) are prepared in the background before anyone
clicks them: by a thread the open started once the bundle was built (`documents.ahead`, a big
file), else as soon as the tab exists.
`view_widget`/`show_view` stay synchronous (scripts and tests rely on that).

What each page is drawn from, what it lacks and the worker task computing that live in
`qt/tab_data.py` (`TabData`, `tab_data`); this module decides when a page is prepared and
builds its widgets.
"""

from __future__ import annotations

import traceback
import weakref
from collections.abc import Callable, Collection
from typing import Any

import pandas as pd
import shiboken6
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QSplitter, QTabWidget, QVBoxLayout, QWidget

from perfview.core import pages as page_registry
from perfview.core.analysis import sampled_threads
from perfview.core.analysis.sampled_threads import ThreadChoice
from perfview.documents import WRITE_GATE_CAP_S, plan
from perfview.documents.prepare import completed, is_partial
from perfview.qt import let_go
from perfview.qt.deferred import hold, later
from perfview.qt.document import Document
from perfview.qt.page_nav import PageNav
from perfview.qt.page_prefetch import PagePrefetch, prefetch_allowed
from perfview.qt.page_widgets import BUILDERS, placeholder
from perfview.qt.quiet_work import QuietWork
from perfview.qt.settings import Settings
from perfview.qt.tab_data import TabData
from perfview.qt.tasks import Task
from perfview.qt.widgets.info_bar import InfoBar
from perfview.store.write_gates import NOW, WriteGate


class DocumentTab(QWidget):
    """Info bar + view tabs for one `Document`. `view_changed(name)` fires on a switch."""

    view_changed = Signal(str)

    def __init__(
        self,
        document: Document,
        tables: dict[str, pd.DataFrame] | None = None,
        settings: Settings | None = None,
        parent: QWidget | None = None,
        pages: dict[str, Any] | None = None,
        writes: WriteGate = NOW,
    ) -> None:
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.page_tabs = page_registry.tabs_for(document.bundle)
        self._views: dict[str, QWidget] = {}
        self._pages: dict[str, QWidget] = {}
        self._splitters: dict[str, QSplitter] = {}
        # what the pages are drawn from: the load's tables and pages, and what is missing
        self.tab_data = TabData(document, self.page_tabs, tables, pages)
        self._preparing: dict[str, tuple[Task, QLabel]] = {}
        self._async = False  # switches prepare in the background once the tab is built
        self._ahead_scheduled = False
        # background work and cache writes held back for the ahead pages, then a quiet window
        self._after_ahead = QuietWork(self, busy=self._busy)
        # started from the quiet work (findings), held weakly: a task never started holds the
        # tab through its result slots (out of the collector's sight)
        self._background: weakref.WeakSet[Task] = weakref.WeakSet()
        self._after_ahead.hold(writes)  # the load's cache entries
        # the other pages' data, prepared one by one once the window is quiet (issue 37:
        # a page clicked then is built from data in hand, not computed after the click)
        self._prefetch = PagePrefetch(
            self._prefetch_next, self._prefetch_task, self._on_prefetched, self._when_quiet
        )
        self._after_ahead.add(self._prefetch.start)

        self.info_bar = InfoBar(self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.tabBar().hide()  # the pages are chosen in `nav`, by group
        for tab in self.page_tabs:
            page = QWidget()
            QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages[tab.name] = page
            self.tabs.addTab(page, tab.title)
        if not self.page_tabs:
            self.tabs.addTab(placeholder("Nothing to show for this file."), "Empty")
        self.tabs.currentChanged.connect(self._on_tab)
        self.nav = PageNav(self.page_tabs, self)
        self.nav.page_chosen.connect(self.tabs.setCurrentIndex)
        self.nav.setVisible(bool(self.page_tabs))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.info_bar)
        layout.addWidget(self.nav)
        layout.addWidget(self.tabs, 1)
        self._show_warnings()
        document.view_requested.connect(self.show_view)
        # a sampled profile's thread choice: a picker above each page that honours it
        self._threads: list[ThreadChoice] | None = None  # found when such a page is built
        self._pickers: dict[str, QWidget] = {}
        document.thread_changed.connect(self._on_thread)
        if self.page_tabs:
            self._on_tab(0)
        self._async = True
        ahead = [n for n in self._pages if plan.is_ahead(n) and n not in self._views]
        laid_out = self.tab_data.laid_out
        if any(self.tab_data.needs_data(n) or n in laid_out for n in ahead):
            self._ahead_scheduled = True
            later(self, lambda: self._prepare_ahead(ahead, laid_out))
        else:
            self._after_ahead.arm()

    # --- public API ------------------------------------------------------------------------
    def view_names(self) -> list[str]:
        return [tab.name for tab in self.page_tabs]

    def view_titles(self) -> list[tuple[str, str]]:
        return [(tab.name, tab.title) for tab in self.page_tabs]

    def current_view(self) -> str:
        index = self.tabs.currentIndex()
        return self.page_tabs[index].name if 0 <= index < len(self.page_tabs) else ""

    def show_view(self, name: str) -> bool:
        """Switch to view `name` (building it if needed); False if this tab has no such view."""
        names = self.view_names()
        if name not in names:
            return False
        was, self._async = self._async, False  # built right here, not in the background
        try:
            self.tabs.setCurrentIndex(names.index(name))
        finally:
            self._async = was
        self.view_widget(name)
        return True

    def is_preparing(self, name: str | None = None) -> bool:
        """True while page `name` (any page, when None) waits for its data from a worker."""
        return bool(self._preparing) if name is None else name in self._preparing

    def view_widget(self, name: str) -> QWidget | None:
        """The view's widget, built on first request (None if the tab has no such view)."""
        if name not in self._pages:
            return None
        if name not in self._views:
            data = self.tab_data
            if name not in data.data and page_registry.needs_data(name, self.document.bundle):
                # asked for now: compute here, not in the background (a missing summary
                # table is computed by the view itself)
                data.adopt(name, data.compute(name))
            self._build(name)
        return self._views.get(name)

    def _busy(self) -> bool:
        """Not quiet (`QuietWork`): a page someone waits for is being prepared, or a worker
        started from the quiet work still runs (the next one waits for it: two workers
        share the GIL with each other and with the GUI thread)."""
        running = any(shiboken6.isValid(t) and t.is_running for t in list(self._background))
        return self.is_preparing() or running or self._prefetch.busy()

    def run_when_quiet(self, task: Task) -> None:
        """Start `task`, a drawn page's own background work (the Timeline's critical-path
        track), once the window is quiet, before the other held-back work and one at a time
        with it (`QuietWork`). Started as the page was built, it shared the cores and the GIL
        with the page's first paints and with the Overview's findings, both computing the
        same masks and graphs at once: on a 1 GB trace 100-190 ms GUI gaps and a 3.5 GB
        peak, twice the window's RSS once the Timeline was drawn."""
        self._background.add(task)
        self._after_ahead.add_first(task.start)
        self._after_ahead.arm()

    def built_view(self, name: str) -> QWidget | None:
        """The view's widget if it is built already; never builds it (what a benchmark or a
        test waiting on a page's background preparation polls)."""
        return self._views.get(name)

    def save_state(self) -> None:
        """Remember splitter sizes (called by the window when it closes or the tab closes)."""
        if self.settings is None:
            return
        for name, splitter in self._splitters.items():
            self.settings.set_splitter_sizes(
                f"{self.document.bundle.format}/{name}", splitter.sizes()
            )

    # --- internals -------------------------------------------------------------------------
    def _show_warnings(self) -> None:
        warnings = list(self.document.bundle.warnings)
        if not warnings:
            return
        first = warnings[0]
        more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
        self.info_bar.show_message(f"{first}{more}", "warning", "\n".join(warnings))

    def _on_tab(self, index: int) -> None:
        if not 0 <= index < len(self.page_tabs):
            return
        name = self.page_tabs[index].name
        self.nav.follow(index)
        if self._async and name not in self._views and self.tab_data.needs_data(name):
            self._prepare_in_background(name)
        else:
            self.view_widget(name)
        self._after_ahead.touch()  # a page shown now is built and painted first
        self.view_changed.emit(name)

    def _prepare_ahead(self, names: list[str], laid_out: Collection[str] = ()) -> None:
        """Prepare the ahead pages in the background, or build those laid out already (as
        a prepared page is built, `_on_prepared`), before other background work starts."""
        self._ahead_scheduled = False
        for name in names:
            if name not in self._views and self.tab_data.needs_data(name):
                self._prepare_in_background(name)
            elif name not in self._views and name in laid_out:
                self._build(name)
        if not self._ahead_busy():
            self._after_ahead.arm()

    def _ahead_busy(self) -> bool:
        """True until the ahead pages are prepared: other background work (an Overview's
        findings) waits, so the page a user clicks next is ready first, and two workers
        do not share the GIL with the GUI thread at once."""
        if not self._async or self._ahead_scheduled:
            return True
        return any(plan.is_ahead(n) for n in self._preparing)

    def _prepare_in_background(self, name: str) -> None:
        """Show "Preparing…" on page `name` and compute its data in a worker task."""
        if name in self._preparing:
            return
        title = dict(self.view_titles()).get(name, name)
        label = placeholder(f"Preparing {title}…")
        layout = self._pages[name].layout()
        assert layout is not None
        layout.addWidget(label)
        running = self._prefetch.running(name)
        if running is not None:  # prepared ahead already: built when that task is done
            self._preparing[name] = (running, label)
            return
        # the layout it may compute is stored once the window is quiet; the gate is made
        # here, as the worker must not touch the tab
        task = self.tab_data.task_for(
            name, lambda: self._after_ahead.hold(WriteGate(WRITE_GATE_CAP_S))
        )
        task.finished.connect(lambda data, n=name: self._on_prepared(n, data))
        task.failed.connect(lambda message, n=name: self._on_prepare_failed(n, message))
        self._preparing[name] = (task, label)
        task.start()

    def _prefetch_next(self, tried: Collection[str]) -> str | None:
        """The next page to prepare ahead of a click (`page_prefetch`): the first one in the
        navigation's order that is neither built nor being prepared and lacks data."""
        if not shiboken6.isValid(self) or not prefetch_allowed(self.document.bundle):
            return None
        for name in self.view_names():
            if name in tried or name in self._views or name in self._preparing:
                continue
            if self.tab_data.needs_data(name):
                return name
        return None

    def _when_quiet(self, start: Callable[[], Any]) -> None:
        """Call `start` once the window is quiet again (the next page prepared ahead)."""
        if shiboken6.isValid(self):
            self._after_ahead.add(start)
            self._after_ahead.arm()

    def _prefetch_task(self, name: str) -> Task:
        return self.tab_data.task_for(name, lambda: NOW)

    def _on_prefetched(self, name: str, data: Any) -> None:
        """Keep a page's data prepared ahead; build the page if it was clicked meanwhile."""
        if not shiboken6.isValid(self):
            return
        self.tab_data.take(name, data)
        if name in self._preparing:  # clicked while it was prepared: "Preparing…" shown
            self._on_prepared(name, None)

    def _on_prepared(self, name: str, data: Any) -> None:
        if not shiboken6.isValid(self):
            return  # the tab was closed while its page was being prepared
        self.tab_data.take(name, data)
        if name not in self._views:
            self._build(name)
        self._drop_preparing(name)

    def _on_prepare_failed(self, name: str, message: str) -> None:
        if not shiboken6.isValid(self):
            return
        if name not in self._views:
            self._show(name, placeholder(f"This view could not be built:\n{message}"))
        self._drop_preparing(name)

    def _drop_preparing(self, name: str) -> None:
        _task, label = self._preparing.pop(name, (None, None))
        if label is not None and shiboken6.isValid(label):
            label.hide()
            label.deleteLater()
        if plan.is_ahead(name) and self._after_ahead.waiting() and not self._ahead_busy():
            # after the page's own put-off pieces (a deferred Timeline): a worker running
            # Python beside them takes the GIL from the GUI thread (its steps 2-3x longer)
            later(self, self._after_ahead.arm)

    def _build(self, name: str) -> None:
        """Build page `name`'s widget, with the cyclic collector held off meanwhile: pyqtgraph
        disconnects signals as items are added, and a collection that runs inside PySide's
        disconnect callback and frees an old widget destroys QObjects while Qt holds its
        connection lock, which deadlocks the GUI thread (seen once in the test suite, in an
        icicle's `addItem`). The collection waits until the page is built."""
        try:
            with let_go.collector_paused():
                widget = self._make(name)
        except Exception as exc:  # show the failure in place; the other views stay usable
            details = traceback.format_exc()
            widget = placeholder(f"This view could not be built:\n{type(exc).__name__}: {exc}")
            widget.setToolTip(details)
        self._show(name, widget)

    def _show(self, name: str, widget: QWidget) -> None:
        self._after_ahead.touch()  # the window is quiet once this page has been for a while
        self._drop_preparing(name)
        self._add_thread_picker(name)
        self._views[name] = widget
        layout = self._pages[name].layout()
        assert layout is not None
        layout.addWidget(widget)
        self._complete_later(name, widget)

    def _add_thread_picker(self, name: str) -> None:
        """Put the thread picker above page `name` when the page honours the thread choice
        (`Page.per_thread`) and the document has threads to choose from."""
        page = page_registry.PAGES.get(name)
        if page is None or not page.per_thread or name in self._pickers:
            return
        if self._threads is None:
            self._threads = sampled_threads.choices(self.document.bundle)
        if len(self._threads) < 2:
            return
        from perfview.qt.views.thread_picker import ThreadPicker

        picker = ThreadPicker(self.document, self._threads, self._pages[name])
        self._pickers[name] = picker
        layout = self._pages[name].layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(0, picker)

    def _on_thread(self, _choice: ThreadChoice) -> None:
        """Another thread was chosen: drop the pages drawn from the old one's tree; the one on
        screen is rebuilt now, the others when next shown."""
        for name in [n for n in self._views if n in self._pickers]:
            widget = self._views.pop(name)
            self._splitters.pop(name, None)
            layout = self._pages[name].layout()
            assert layout is not None
            layout.removeWidget(widget)
            widget.hide()
            widget.deleteLater()
        if self.current_view() in self._pickers:
            self.view_widget(self.current_view())

    def _complete_later(self, name: str, widget: QWidget) -> None:
        """A page drawn from partial data (an Overview without its findings, as a load
        prepares it: `pages.prepare_first`) gets the rest from a worker."""
        data = self.tab_data.data.get(name)
        bundle = self.document.bundle
        if not is_partial(data) or bundle.timeline is None:  # whole (or cached: a reopen)
            return
        release = hold(widget)
        task = Task(lambda _progress: completed(name, bundle, data), name=f"{name}: findings")
        task.finished.connect(lambda full, n=name, w=widget: self._on_completed(n, w, full))
        task.done.connect(release)
        self._background.add(task)
        if self._ahead_busy():
            self._after_ahead.add(task.start)
        else:
            task.start()

    def _on_completed(self, name: str, widget: QWidget, data: Any) -> None:
        if not shiboken6.isValid(self):
            return
        self.tab_data.adopt(name, data)
        setter = getattr(widget, "set_findings", None)
        if shiboken6.isValid(widget) and setter is not None:
            setter(data)

    def _make(self, name: str) -> QWidget:
        widget = next((tab.widget for tab in self.page_tabs if tab.name == name), None)
        builder = BUILDERS.get(widget or "table", BUILDERS["table"])
        return builder(self, name, self.tab_data.data.get(name))

    def restore_splitter(self, name: str, splitter: QSplitter) -> None:
        self._splitters[name] = splitter
        if self.settings is not None:
            sizes = self.settings.splitter_sizes(f"{self.document.bundle.format}/{name}")
            if sizes and len(sizes) == splitter.count():
                splitter.setSizes(sizes)


__all__ = ["DocumentTab"]
