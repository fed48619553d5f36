"""Run Script dialog, run panel, runs list and the controller the main window wires."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from perfview.qt.views.run_view import (
    RunController,
    RunDialog,
    RunPanel,
    RunsDialog,
    load_last_spec,
)
from perfview.runner.spec import RunOptions, RunSpec, list_runs

SCRIPTS = Path(__file__).resolve().parent.parent / "data" / "scripts"

pytestmark = pytest.mark.gui


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_dialog_builds_spec_and_remembers_it(qtbot, settings: QSettings, tmp_path: Path) -> None:
    dialog = RunDialog(settings=settings)
    qtbot.addWidget(dialog)
    assert dialog.python.text() == sys.executable
    dialog.script.setText(str(SCRIPTS / "torch_mm.py"))
    dialog.arguments.setText("--epochs 2 'two words'")
    dialog.mode.setCurrentIndex(1)
    assert dialog.options.currentIndex() == 1  # the torch options page follows the mode
    dialog.options.with_stack.setChecked(True)
    dialog.options.schedule.setText("1,1,2")
    dialog.options.step_every.setValue(0.5)
    spec = dialog.spec()
    assert spec == RunSpec(
        "torch",
        str(SCRIPTS / "torch_mm.py"),
        ("--epochs", "2", "two words"),
        str(SCRIPTS),
        sys.executable,
        None,
        RunOptions(with_stack=True, schedule=(1, 1, 2, 1), step_every=0.5),
    )
    dialog.accept()
    assert dialog.accepted_spec == spec
    assert load_last_spec(settings) == spec
    again = RunDialog(settings=settings)
    qtbot.addWidget(again)
    assert again.spec() == spec
    assert again.options.schedule.text() == "1,1,2,1"


def test_dialog_refuses_bad_input(qtbot, settings: QSettings, tmp_path: Path) -> None:
    dialog = RunDialog(settings=settings)
    qtbot.addWidget(dialog)
    dialog.script.setText(str(tmp_path / "missing.py"))
    dialog.accept()
    assert "Script not found" in dialog.error.text()
    assert dialog.result() == 0
    dialog.script.setText(str(SCRIPTS / "cpu_work.py"))
    dialog.mode.setCurrentIndex(1)
    dialog.options.schedule.setText("1,2")
    dialog.accept()
    assert "wait,warmup,active" in dialog.error.text()
    assert load_last_spec(settings) is None


def test_panel_shows_a_run_and_emits_its_result(qtbot, tmp_path: Path) -> None:
    panel = RunPanel()
    qtbot.addWidget(panel)
    spec = RunSpec("memory-lines", str(SCRIPTS / "lines_alloc.py"), cwd=str(tmp_path))
    with qtbot.waitSignal(panel.result_ready, timeout=30000) as blocker:
        started = panel.start(spec, runs_root=tmp_path / "runs")
        assert panel.cancel_button.isEnabled()
        assert panel.status.text() == "Running…"
    assert blocker.args == [started.output]
    assert "Filename:" in Path(started.output or "").read_text()
    assert panel.status.text() == "Finished"
    assert not panel.cancel_button.isEnabled()
    assert "profile written to" in panel.log.toPlainText()
    assert panel.title.text() == "memory-lines · lines_alloc.py"


def test_panel_offers_partial_result_of_failed_run(qtbot, tmp_path: Path) -> None:
    panel = RunPanel()
    qtbot.addWidget(panel)
    spec = RunSpec("cprofile", str(SCRIPTS / "exits.py"), output=str(tmp_path / "e.prof"))
    ended: list[str] = []
    panel.run_ended.connect(ended.append)
    with qtbot.waitSignal(panel.result_ready, timeout=30000) as blocker:
        panel.start(spec)
    assert blocker.args == [str(tmp_path / "e.prof")]
    assert ended == ["failed"]
    assert panel.status.text().startswith("Failed: script exited with code 3")


def test_controller_run_rerun_and_runs_list(qtbot, settings: QSettings, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    controller = RunController(settings=settings, runs_root=runs)
    qtbot.addWidget(controller.panel)
    opened: list[str] = []
    controller.open_requested.connect(opened.append)
    assert controller.rerun_last() is False  # nothing yet: the dialog opens instead
    dialog = controller.dialog
    assert dialog is not None
    assert dialog.isVisible()
    dialog.script.setText(str(SCRIPTS / "cpu_work.py"))
    with qtbot.waitSignal(controller.open_requested, timeout=30000):
        dialog.run_button.click()
    assert controller.panel.isVisible()
    with qtbot.waitSignal(controller.open_requested, timeout=30000):
        assert controller.rerun_last() is True
    assert len(opened) == 2
    assert opened[0] != opened[1]
    assert all(Path(p).parent.parent == runs for p in opened)

    runs_dialog = controller.show_runs()
    qtbot.addWidget(runs_dialog)
    assert runs_dialog.table.rowCount() == 2
    assert runs_dialog.table.item(0, 1).text() == "cprofile"
    assert runs_dialog.table.item(0, 3).text() == "ok"
    with qtbot.waitSignal(controller.open_requested) as blocker:
        runs_dialog.open_selected()
    assert blocker.args == [opened[1]]  # newest first
    assert runs_dialog.delete_selected(confirm=False)
    assert [r.output for r in list_runs(runs)] == [opened[0]]
    assert runs_dialog.table.rowCount() == 1


def test_runs_dialog_disables_open_without_output(qtbot, tmp_path: Path) -> None:
    from perfview.runner.spec import RunRecord, prepare_output

    spec, folder = prepare_output(RunSpec("cprofile", "/gone.py"), tmp_path)
    assert folder is not None
    RunRecord.start(spec, folder).finish("error", 2)
    dialog = RunsDialog(root=tmp_path)
    qtbot.addWidget(dialog)
    assert dialog.table.item(0, 3).text() == "error"
    assert dialog.table.item(0, 4).text() == "2"
    assert not dialog.open_button.isEnabled()
    assert dialog.delete_button.isEnabled()


def test_sample_mode_options_round_trip(qtbot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    dialog = RunDialog(settings=settings)
    qtbot.addWidget(dialog)
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    options = RunOptions(rate=250, native=True, subprocesses=False, gil=True)
    dialog.set_spec(RunSpec("sample", str(script), options=options))
    assert dialog.options.currentWidget() is dialog.options.sample_options
    spec = dialog.spec()
    assert spec.mode == "sample"
    assert (spec.options.rate, spec.options.native, spec.options.gil) == (250, True, True)
