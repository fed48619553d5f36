"""Callers/Callees agree with `pstats`: every row names its function as `file:line(function)`,
the way `pstats.Stats.print_callees` and snakeviz print it, with the edge's exact numbers.

A bare name is not enough: in a real script profile the callees of `builtins.exec` are 20+
different `<module>` functions, and only the file and line tell them apart.
"""

from __future__ import annotations

import pstats

import pytest

from perfview.core.analysis.pstats_graph import callers_callees
from perfview.loaders import cprofile
from tests.conftest import sample

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.gui

FILE = "pstats/dtu_gabriellanaro_output.prof"
EXEC = ("~", 0, "<built-in method builtins.exec>")


def _label(key: tuple[str, int, str]) -> str:
    return pstats.func_std_string(key)


def _exec_id(profile) -> int:  # type: ignore[no-untyped-def]
    funcs = profile.functions
    hit = funcs.index[(funcs["file"] == EXEC[0]) & (funcs["function"] == EXEC[2])]
    return int(hit[0])


def test_callees_of_exec_are_labelled_like_print_callees(qtbot) -> None:  # type: ignore[no-untyped-def]
    from perfview.qt.views.sandwich_view import SandwichView

    path = sample(FILE)
    profile = cprofile.load(path).profile
    assert profile is not None
    stats = pstats.Stats(str(path))
    stats.calc_callees()
    expected = {_label(k): v for k, v in stats.all_callees[EXEC].items()}  # type: ignore[attr-defined]
    assert len(expected) > 20

    view = SandwichView(None, None, profile)
    qtbot.addWidget(view)
    view.show_function(EXEC[2], _exec_id(profile))
    shown = [view.callees.item(i, 0).text() for i in range(view.callees.rowCount())]
    # The view lists the heaviest 500 edges; each row is one pstats callee, named as pstats
    # names it, and no two rows read the same.
    assert len(shown) == min(500, len(expected))
    assert set(shown) <= set(expected)
    assert len(set(shown)) == len(shown)
    # The calls column is pstats' per-edge ncalls (cProfile's caller tuple is nc, cc, tt, ct).
    for i, label in enumerate(shown):
        assert view.callees.item(i, 1).text() == f"{expected[label][0]:,}"


def test_activating_a_callee_row_selects_that_exact_function(qtbot) -> None:  # type: ignore[no-untyped-def]
    from perfview.qt.views.sandwich_view import SandwichView

    profile = cprofile.load(sample(FILE)).profile
    assert profile is not None
    view = SandwichView(None, None, profile)
    qtbot.addWidget(view)
    view.show_function(EXEC[2], _exec_id(profile))
    _, callees = callers_callees(profile, _exec_id(profile))
    # Pick a `<module>` row that is not the heaviest `<module>`: a bare-name lookup would
    # land on the wrong one.
    modules = callees.index[(callees["function"] == "<module>") & (callees.index < 500)]
    row = int(modules[-1])
    want = callees.loc[row]
    view._activated(view.callees.item(row, 0))
    label = f"{want['file']}:{want['line']}({want['function']})"
    assert label in view.title.text().replace("&lt;", "<").replace("&gt;", ">")
