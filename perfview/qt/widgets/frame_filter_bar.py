"""The row of frame-filter toggles over a flame graph (`core.analysis.frame_filters`).

One checkbox per filter that hides anything in the tree, each saying how much of the weight
passes through the frames it hides ("import system (69.7 % passes through)"); none at all
when no filter applies. The icicle and the sandwich share it, so a toggle reads and acts the
same on every flame-graph page.
"""

from __future__ import annotations

from collections.abc import Collection

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QWidget

from perfview.core.analysis import frame_filters
from perfview.core.model import CallTree


class FrameFilterBar(QWidget):
    """Checkboxes of the filters that apply to `tree`; `hidden` ticked at the start.
    `changed()`: the hidden set changed (`hidden_keys`); `apply(tree)` hides its frames."""

    changed = Signal()

    def __init__(
        self, tree: CallTree, hidden: Collection[str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        found = frame_filters.applicable(tree)
        self.hidden_keys: set[str] = set(hidden) & {flt.key for flt, _s, _n in found}
        self.boxes: dict[str, QCheckBox] = {}
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 0, 6, 2)
        row.addWidget(QLabel("Hide:"))
        for flt, share, nodes in found:
            box = QCheckBox(f"{flt.label} ({share * 100:.1f} % passes through)")
            box.setChecked(flt.key in self.hidden_keys)
            box.setToolTip(
                f"{nodes:,} nodes of {flt.label} frames; hidden, their children join their "
                "caller and the weight stays where it was"
            )
            box.toggled.connect(lambda on, key=flt.key: self.set_hidden(key, on))
            self.boxes[flt.key] = box
            row.addWidget(box)
        row.addStretch(1)
        self.setVisible(bool(found))

    def set_hidden(self, key: str, hidden: bool) -> None:
        """Hide (or show again) filter `key`'s frames; `changed` once per real change."""
        box = self.boxes.get(key)
        if box is not None and box.isChecked() != hidden:
            box.setChecked(hidden)  # comes back here through `toggled`
            return
        before = set(self.hidden_keys)
        if hidden:
            self.hidden_keys.add(key)
        else:
            self.hidden_keys.discard(key)
        if self.hidden_keys != before:
            self.changed.emit()

    def apply(self, tree: CallTree) -> CallTree:
        """`tree` without the frames of the hidden filters (itself when none is hidden)."""
        if not self.hidden_keys:
            return tree
        return frame_filters.hide_frames(
            tree, frame_filters.hidden_frames(tree.frames, self.hidden_keys)
        )


__all__ = ["FrameFilterBar"]
