"""The run dialog's per-mode option pages, one stacked page per recording mode.

Its own module because the pages are the part of the Run Script dialog that grows with every
new mode (torch, memory, memory-lines, memray, cuda-memory, sample): the dialog itself only
needs "show the page for this mode" and "RunOptions from / to the widgets".
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QWidget,
)

from perfview.qt.views.sample_options import SampleOptions
from perfview.runner.spec import RunOptions, parse_schedule


class RunOptionsPages(QStackedWidget):
    """One page per mode, in `MODES` order; reads and writes `RunOptions`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.addWidget(QLabel("No options: the whole script is profiled."))
        self.addWidget(self._torch_page())
        self.addWidget(self._memory_page())
        self.addWidget(self._lines_page())
        memray_page = QWidget()
        form = QFormLayout(memray_page)
        self.native = QCheckBox("Native (C/C++) frames too")
        form.addRow(self.native)
        self.addWidget(memray_page)
        self.addWidget(
            QLabel("Records the allocator history; the snapshot is written at exit and on OOM.")
        )
        self.sample_options = SampleOptions()
        self.addWidget(self.sample_options)
        self.addWidget(QLabel("Scalene profiles the whole script: CPU, GPU and memory per line."))

    def _torch_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.record_shapes = QCheckBox("Record input shapes")
        self.profile_memory = QCheckBox("Profile tensor memory")
        self.with_stack = QCheckBox("Record Python stacks")
        self.schedule = QLineEdit()
        self.schedule.setPlaceholderText("wait,warmup,active[,repeat]  (empty: whole run)")
        self.step_every = QDoubleSpinBox()
        self.step_every.setRange(0.0, 3600.0)
        self.step_every.setSpecialValueText("off (script calls perfview_step())")
        self.step_every.setSuffix(" s")
        self.step_on_optimizer = QCheckBox("Step after every optimizer.step()")
        for box in (self.record_shapes, self.profile_memory, self.with_stack):
            form.addRow(box)
        form.addRow("Schedule:", self.schedule)
        form.addRow("Step every:", self.step_every)
        form.addRow(self.step_on_optimizer)
        return page

    def _memory_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.interval = QDoubleSpinBox()
        self.interval.setRange(0.01, 60.0)
        self.interval.setValue(0.1)
        self.interval.setSuffix(" s")
        self.include_children = QCheckBox("Add child processes' memory")
        self.include_children.setChecked(True)
        form.addRow("Interval:", self.interval)
        form.addRow(self.include_children)
        return page

    def _lines_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.functions = QLineEdit()
        self.functions.setPlaceholderText("names or Class.method, comma-separated (+ @profile)")
        self.precision = QSpinBox()
        self.precision.setRange(0, 6)
        self.precision.setValue(1)
        form.addRow("Functions:", self.functions)
        form.addRow("Decimals:", self.precision)
        return page

    def set_options(self, o: RunOptions) -> None:
        self.record_shapes.setChecked(o.record_shapes)
        self.profile_memory.setChecked(o.profile_memory)
        self.with_stack.setChecked(o.with_stack)
        self.schedule.setText(",".join(map(str, o.schedule)) if o.schedule else "")
        self.step_every.setValue(o.step_every or 0.0)
        self.step_on_optimizer.setChecked(o.step_on_optimizer)
        self.interval.setValue(o.interval)
        self.include_children.setChecked(o.include_children)
        self.functions.setText(", ".join(o.functions))
        self.precision.setValue(o.precision)
        self.native.setChecked(o.native)
        self.sample_options.set_options(o)

    def read(self, mode: str) -> RunOptions:
        """The options the pages describe for `mode`; ValueError (for the user) on a bad field."""
        text = self.schedule.text().strip()
        schedule = parse_schedule(text) if text else None
        functions = tuple(f for f in self.functions.text().replace(",", " ").split() if f)
        options = RunOptions(
            record_shapes=self.record_shapes.isChecked(),
            profile_memory=self.profile_memory.isChecked(),
            with_stack=self.with_stack.isChecked(),
            schedule=schedule,
            step_every=self.step_every.value() or None,
            step_on_optimizer=self.step_on_optimizer.isChecked(),
            interval=self.interval.value(),
            include_children=self.include_children.isChecked(),
            functions=functions,
            precision=self.precision.value(),
            native=self.native.isChecked(),
        )
        if mode == "sample":  # its own native checkbox, rate, …
            options = self.sample_options.apply(options)
        return options
