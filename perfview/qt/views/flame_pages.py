"""Bottom-up flame graph, flame sandwich, and the pages of sampled profiles.

Both graphs are drawn by the ordinary `IcicleView` on derived trees (`core.flame_sandwich`):
the bottom-up page on the inverted tree (where time is spent, then who called it), the
sandwich page on two trees that meet at the selected function — its callers above, drawn
upwards, and its callees below. The sandwich follows the document's selection, so picking a
function in the Functions table, the icicle or the call tree re-centres it.

Deriving a tree is vectorised but not free on a million-node trace tree, so big trees are
derived in a worker task (the page shows "Preparing…" meanwhile); small ones right away, so
`show_view` and screenshots get a drawn page.

`page_specs(bundle, names)` and `make_page(name, document)` are the whole hook into
`document_tab`.
"""

from __future__ import annotations

from collections.abc import Callable

import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from perfview.core.analysis import flame_sandwich, frame_filters
from perfview.core.model import CallTree
from perfview.qt.document import Document, Selection
from perfview.qt.tasks import Task
from perfview.qt.widgets.frame_filter_bar import FrameFilterBar

SYNC_NODES = 300_000  # derive trees up to this size on the GUI thread (~0.1 s)


def _label(text: str) -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    return label


class _Derived(QtWidgets.QWidget):
    """A page that shows a widget built from a derived tree, computed off-thread if big."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_ = QtWidgets.QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.setSpacing(0)
        self.task: Task | None = None

    def derive(self, size: int, fn: Callable[[], object], show: Callable[[object], None]) -> None:
        if size <= SYNC_NODES:
            show(fn())
            return
        self.task = Task(lambda _progress: fn(), name="derive tree")
        self.task.finished.connect(lambda data: self._alive(show, data))
        self.task.failed.connect(lambda message: self._alive(self.fail, message))
        self.task.start()

    def _alive(self, fn: Callable[[object], None], value: object) -> None:
        if shiboken6.isValid(self):  # the tab may have closed while the worker ran
            fn(value)

    def fail(self, message: object) -> None:
        self.layout_.addWidget(_label(f"This view could not be built:\n{message}"))


class BottomUpView(_Derived):
    """The inverted flame graph: functions by self weight on top, their callers below."""

    def __init__(self, tree: CallTree, document: Document | None = None) -> None:
        super().__init__()
        self.document = document
        self.icicle: QtWidgets.QWidget | None = None
        self.note = QtWidgets.QLabel(
            "Bottom-up: top row = where the time is spent (self), each row below = who called it"
        )
        self.note.setContentsMargins(6, 3, 6, 3)
        self.layout_.addWidget(self.note)
        self.derive(len(tree), lambda: flame_sandwich.bottom_up(tree), self._show)

    def _show(self, inverted: object) -> None:
        from perfview.qt.views.icicle_view import IcicleView

        assert isinstance(inverted, CallTree)
        bundle = getattr(self.document, "bundle", None)
        hidden = frame_filters.HIDDEN_BY_DEFAULT.get(getattr(bundle, "format", ""), frozenset())
        self.icicle = IcicleView(inverted, self.document, None, filters=hidden)
        self.icicle.mode_box.setVisible(False)  # a derived tree has no time order
        self.layout_.addWidget(self.icicle, 1)


class FlameSandwichView(_Derived):
    """Callers (an inverted flame, drawn upwards) above, callees below, of one function."""

    def __init__(self, tree: CallTree, document: Document | None = None) -> None:
        super().__init__()
        self.source = tree  # before any frames are hidden
        bundle = getattr(document, "bundle", None)
        hidden = frame_filters.HIDDEN_BY_DEFAULT.get(getattr(bundle, "format", ""), frozenset())
        self.filter_bar = FrameFilterBar(tree, hidden)
        self.filter_bar.changed.connect(self._on_filters)
        self.tree = self.filter_bar.apply(tree)
        self.document = document
        self.name = ""
        self.pending = ""  # a function selected while the page was hidden
        self.callers: QtWidgets.QWidget | None = None
        self.callees: QtWidgets.QWidget | None = None
        self.title = QtWidgets.QLabel("Select a function to see its callers and callees")
        self.title.setContentsMargins(6, 3, 6, 3)
        self.split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        self.layout_.addWidget(self.filter_bar)
        self.layout_.addWidget(self.title)
        self.layout_.addWidget(self.split, 1)
        if document is not None:
            document.selection_changed.connect(self._on_selection)
        first = flame_sandwich.heaviest_function(tree)
        if first is not None:
            self.show_function(first)

    def _on_filters(self) -> None:
        """A frame filter toggled: both trees again from the source without those frames."""
        self.tree = self.filter_bar.apply(self.source)
        if self.name:
            self.show_function(self.name)

    def _on_selection(self, selection: Selection | None) -> None:
        if selection is None or not selection.name:
            return
        if selection.source in (self, self.callers, self.callees):
            return  # a click inside the sandwich selects; it does not re-centre
        if selection.kind in ("function", "op", "node"):
            if self.isVisible():
                self.show_function(selection.name)
            else:  # re-centred when the page is next shown, not on every click elsewhere
                self.pending = selection.name

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if self.pending and self.pending != self.name:
            self.show_function(self.pending)
        self.pending = ""

    def show_function(self, name: str) -> None:
        """Re-centre the sandwich on `name` (every node of that name, merged)."""
        self.name = name
        tree = self.tree

        def both() -> tuple[CallTree, CallTree]:
            return flame_sandwich.callers_tree(tree, name), flame_sandwich.callees_tree(tree, name)

        self.derive(len(tree), both, lambda trees: self._show(name, trees))

    def _show(self, name: str, trees: object) -> None:
        from perfview.qt.views.icicle_view import IcicleView

        if name != self.name or not isinstance(trees, tuple):
            return  # superseded by a later selection
        callers, callees = trees
        for old in (self.callers, self.callees):
            if old is not None:
                old.hide()
                old.setParent(None)
                old.deleteLater()
        if len(callers) <= 1:
            self.title.setText(f"<b>{_html(name)}</b>: not in this call tree")
            self.callers = self.callees = None
            return
        self.title.setText(f"<b>{_html(name)}</b> — callers above (read upwards), callees below")
        top = IcicleView(callers, self.document, None)
        top.viewbox.invertY(False)  # grows upwards: the function sits on the bottom row
        bottom = IcicleView(callees, self.document, None)
        for view, label in ((top, "callers ↑"), (bottom, "callees ↓")):
            view.mode_box.setVisible(False)  # a derived tree has no time order
            view.node_names[0] = label  # the synthetic root row says which way to read
            view.zoom_to(0)  # redraw the breadcrumb with the label
        self.callers, self.callees = top, bottom
        self.split.addWidget(top)
        self.split.addWidget(bottom)
        self.split.setSizes([1000, 1000])


def make_page(name: str, document: Document) -> QtWidgets.QWidget | None:
    """The widget of page `name` when this module owns it, else None."""
    if name not in ("bottom-up", "sandwich"):
        return None
    tree = document.tree()
    if tree is None or len(tree) <= 1:
        return _label("This file has no call tree to draw.")
    if name == "bottom-up":
        return BottomUpView(tree, document)
    return FlameSandwichView(tree, document)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


__all__ = ["BottomUpView", "FlameSandwichView", "make_page"]
