"""The main window's parts stand alone: each controller works with only the widgets it is
handed (no window), and every menu command calls a callable, checked when the menus are built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QMainWindow, QStackedWidget, QTabWidget

from perfview.qt import actions
from perfview.qt.settings import Settings
from perfview.qt.widgets.info_bar import InfoBar
from perfview.qt.window_status import StatusController
from perfview.qt.window_tabs import TabsController

pytestmark = pytest.mark.gui


def test_tabs_controller_shows_the_welcome_page_only_without_tabs(qtbot: Any) -> None:
    stack = QStackedWidget()
    qtbot.addWidget(stack)
    tabs, welcome = QTabWidget(stack), QLabel("welcome", stack)
    stack.addWidget(welcome)
    stack.addWidget(tabs)
    controller = TabsController(tabs, stack, welcome)
    seen: list[object] = []
    controller.current_changed.connect(seen.append)

    first, second = QLabel("a"), QLabel("b")
    controller.add_tab(first, "a", "tip a")
    controller.add_tab(second, "b", "tip b", at=0)
    assert stack.currentWidget() is tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == ["b", "a"]
    assert tabs.currentWidget() is second
    assert tabs.tabToolTip(0) == "tip b"
    assert controller.current_tab() is None  # labels are not documents
    controller.close_current()
    controller.close_current()
    assert tabs.count() == 0
    assert stack.currentWidget() is welcome
    assert seen
    assert seen[-1] is None


def test_status_controller_reports_in_the_bars_it_is_given(qtbot: Any) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    error_bar = InfoBar(window)
    status = StatusController(window.statusBar(), error_bar)
    status.say("hello")
    assert window.statusBar().currentMessage() == "hello"
    status.error("perfview: cannot open x: broken", "details")
    assert error_bar.label.text() == "perfview: cannot open x: broken"
    assert error_bar.details == "details"
    assert not status.is_loading()
    assert not status.gone()


def test_every_menu_command_calls_a_handler_of_the_window(qtbot: Any, tmp_path: Path) -> None:
    from perfview.qt.main_window import MainWindow

    window = MainWindow(Settings.ephemeral(), warm=False)
    qtbot.addWidget(window)
    handlers = window._handlers()
    assert set(handlers) == {spec.id for spec in actions.ACTIONS}
    assert all(callable(h) for h in handlers.values())
    built = window.menus_controller.actions_by_id
    assert set(built) == set(handlers)
    # a table entry without a handler (a renamed method) fails when the menus are built
    del handlers["reload"]
    with pytest.raises(ValueError, match="reload"):
        actions.build_actions(QObject(), handlers)


def test_menu_commands_reach_their_controllers(qtbot: Any) -> None:
    from perfview.qt.main_window import MainWindow

    window = MainWindow(Settings.ephemeral(), warm=False)
    qtbot.addWidget(window)
    by_id = window.menus_controller.actions_by_id
    assert not by_id["close"].isEnabled()  # no document yet
    with qtbot.waitSignal(window.document_opened, timeout=60_000) as opened:
        by_id["open_example"].trigger()  # MainWindow.open_example
    tab = opened.args[0]
    assert window.tabs_controller.current_tab() is tab
    assert by_id["close"].isEnabled()
    assert by_id["snakeviz"].isEnabled()
    assert window.windowTitle() == f"{tab.document.title} — perfview"
    first = tab.current_view()
    by_id["next_view"].trigger()  # TabCommands.next_view
    assert tab.current_view() != first
    by_id["close"].trigger()  # TabsController.close_current
    assert window.tabs.count() == 0
    assert window.stack.currentWidget() is window.welcome
    assert not by_id["close"].isEnabled()
    assert window.windowTitle() == "perfview"
