"""The run dialog's options page for the `sample` mode (py-spy): rate and what to include."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QFormLayout, QSpinBox, QWidget

from perfview.runner.spec import RunOptions


class SampleOptions(QWidget):
    """Rate (Hz), native frames, child processes, GIL-only; reads and writes `RunOptions`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        self.rate = QSpinBox()
        self.rate.setRange(1, 10_000)
        self.rate.setValue(100)
        self.rate.setSuffix(" Hz")
        self.native = QCheckBox("Include native (C/C++/Cython) frames")
        self.subprocesses = QCheckBox("Also sample child processes")
        self.gil = QCheckBox("Only samples holding the GIL")
        form.addRow("Rate:", self.rate)
        for box in (self.native, self.subprocesses, self.gil):
            form.addRow(box)

    def set_options(self, options: RunOptions) -> None:
        self.rate.setValue(options.rate)
        self.native.setChecked(options.native)
        self.subprocesses.setChecked(options.subprocesses)
        self.gil.setChecked(options.gil)

    def apply(self, options: RunOptions) -> RunOptions:
        """`options` with this page's values."""
        return replace(
            options,
            rate=self.rate.value(),
            native=self.native.isChecked(),
            subprocesses=self.subprocesses.isChecked(),
            gil=self.gil.isChecked(),
        )
