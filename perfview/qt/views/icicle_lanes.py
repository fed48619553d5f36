"""The icicle's lane selector: which threads or GPU streams a trace's merged tree shows.

Its own module because it is the one part of the icicle that runs background work of its own
(listing the lane choices scans every slice, building a lane subset's tree is a full merge) and
only applies to traces; `IcicleView` just shows the tree it hands over.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from perfview.core.analysis import trace_tree
from perfview.core.model import CallTree, Timeline
from perfview.qt.tasks import Task


class LaneSelector(QtWidgets.QComboBox):
    """Combo box of `trace_tree.LaneChoice`s, hidden for pstats and one-lane traces.

    Its entries scan every slice (a fraction of a second at 1 GB), so a worker finds them and
    `ready` fires once they are in. Picking one emits `building(label)`, then, from a worker,
    `tree_ready(tree, key)` unless another pick came meanwhile.
    """

    ready = QtCore.Signal()
    building = QtCore.Signal(str)  # the chosen entry's label, while its tree is built
    tree_ready = QtCore.Signal(object, str)  # CallTree, the choice's key

    def __init__(self, timeline: Timeline | None, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.timeline = timeline
        self._generation = 0
        self.setToolTip("Which threads or GPU streams the merged tree shows")
        self.setVisible(False)
        if timeline is not None and len(timeline.events):
            task = Task(lambda _progress: trace_tree.lane_choices(timeline), "icicle lane list")
            task.finished.connect(self._fill)
            task.start()
        self.setMaximumWidth(260)
        self.setSizeAdjustPolicy(
            QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.setMinimumContentsLength(14)
        self.currentIndexChanged.connect(self._changed)

    def _fill(self, choices: list[trace_tree.LaneChoice]) -> None:
        with QtCore.QSignalBlocker(self):  # the first entry is the tree shown now
            for choice in choices:
                self.addItem(choice.label, choice)
        self.setVisible(len(choices) > 1)
        self.ready.emit()

    def _changed(self, index: int) -> None:
        """Build the chosen lanes' tree on a worker thread; `_on_tree_ready` hands it over."""
        choice = self.itemData(index)
        if choice is None or self.timeline is None:
            return
        self._generation += 1
        generation, timeline = self._generation, self.timeline
        self.building.emit(choice.label)
        task = Task(
            lambda _progress: (trace_tree.trace_tree(timeline, choice), generation), "icicle lanes"
        )
        task.finished.connect(self._on_tree_ready)  # a bound slot: dropped if this box dies
        task.start()

    def _on_tree_ready(self, result: tuple[CallTree, int]) -> None:
        tree, generation = result
        if generation != self._generation:
            return  # the user picked again meanwhile
        self.tree_ready.emit(tree, self.currentData().key)
