"""Help ▸ Examples: each bundled demo (slow or fixed form) opens the Run dialog pre-filled.

The demos and their recorder options live in `perfview.runner.examples`; this module only turns
them into menu entries. Choosing one opens the same Run Script dialog as Profile ▸ Run, filled
in (script, --fixed, torch mode, schedule, with_stack / record_shapes), so the user sees how it
is recorded and starts it with one click.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMenu, QWidget

from perfview.qt.views.run_view import RunDialog
from perfview.runner.examples import DEMOS, demo_spec


def examples_menu(parent: QWidget, open_dialog: Callable[[], RunDialog]) -> QMenu:
    """A menu with one sub-menu per demo ("Slow form" / "Fixed form"); `open_dialog` opens the
    Run dialog (the window's run controller) and returns it for pre-filling."""
    menu = QMenu("&Examples", parent)
    for demo in DEMOS.values():
        sub = menu.addMenu(demo.name)
        sub.setToolTip(f"{demo.summary} → {demo.finding}")
        sub.setToolTipsVisible(True)
        for label, fixed in (("Slow form", False), ("Fixed form", True)):
            action = sub.addAction(label)
            action.setToolTip(demo.summary)
            action.triggered.connect(
                lambda _checked=False, n=demo.name, f=fixed: prefill(open_dialog(), n, f)
            )
    return menu


def prefill(dialog: RunDialog, name: str, fixed: bool) -> RunDialog:
    """Fill `dialog` with the recording of demo `name` (slow or fixed)."""
    dialog.set_spec(demo_spec(name, fixed))
    return dialog


__all__ = ["examples_menu", "prefill"]
