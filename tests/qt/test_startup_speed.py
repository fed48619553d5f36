"""What makes the window start faster without changing what it does (issue 20): PySide's
per-import "uses PySide?" check answered from the file's bytes (`qt.pyside_features`), the
collector held back during start-up (`startup_gc`), and no numba import when the loaders are
only sniffing a file."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

import PySide6.QtCore  # noqa: F401  (loads shibokensupport.feature)

from perfview import startup_gc
from perfview.qt import pyside_features

ROOT = Path(__file__).resolve().parents[2]


def _pyside_check():  # type: ignore[no-untyped-def]
    feature = sys.modules.get("shibokensupport.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if check is None:
        pytest.skip("this PySide has no per-module feature check")
    return check


def test_the_fast_check_answers_as_pysides_own_for_every_loaded_module() -> None:
    """Every module this test process has loaded (hundreds: Qt, perfview, pytest, the stdlib)."""
    check = _pyside_check()
    original = pyside_features._original or check
    modules = [m for m in list(sys.modules.values()) if m is not None]
    assert len(modules) > 500
    theirs, mine = [], []
    for module in modules:
        try:  # PySide's own check raises on some modules (torch.classes' namespace, once a
            answer = bool(original(module))  # test has loaded it): nothing to compare there
        except RuntimeError:
            continue
        theirs.append(answer)
        mine.append(pyside_features.uses_pyside(module))
    assert len(mine) > 500
    assert mine == theirs
    assert pyside_features.uses_pyside(sys.modules[__name__])  # this file imports PySide6
    assert not pyside_features.uses_pyside(sys.modules["json"])


def test_install_replaces_the_check_once() -> None:
    _pyside_check()
    pyside_features.install()
    feature = sys.modules["shibokensupport.feature"]
    assert feature._mod_uses_pyside is pyside_features.uses_pyside
    assert pyside_features.install() is False  # already in place
    assert pyside_features._original is not pyside_features.uses_pyside


def test_the_collector_is_held_then_released_with_the_thresholds_it_had() -> None:
    before = gc.get_threshold()
    try:
        startup_gc.hold()
        assert startup_gc.held()
        assert gc.get_threshold() == startup_gc.HELD
        startup_gc.hold()  # a second hold keeps the first saved thresholds
        assert gc.isenabled()  # held back, never disabled (loads pause it themselves)
    finally:
        startup_gc.release()  # also freezes what exists (harmless: it is only not traversed)
    assert not startup_gc.held()
    assert gc.get_threshold() == before
    startup_gc.release()  # no-op when not held
    assert gc.get_threshold() == before


def test_the_loaders_sniff_without_numba() -> None:
    """The registry imports every loader to sniff a file; none of them imports numba (~0.2 s
    of a `.prof`'s start) until it reads its format. A subprocess: this one has numba."""
    code = (
        "import sys\n"
        "from perfview.loaders import registry, service\n"
        "print('numba' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_a_big_prof_opens_from_the_preloading_child(tmp_path: Path) -> None:
    """`python -m perfview BIG.prof` end to end (offscreen): the file is parsed in the child
    forked at launch, the window takes its Bundle and draws the first page."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the preload forks: Linux only")
    sys.path.insert(0, str(ROOT / "scripts" / "bench"))
    try:
        import startup_probe
    finally:
        sys.path.remove(str(ROOT / "scripts" / "bench"))
    big = tmp_path / "big.prof"
    maker = ROOT / "scripts" / "fixtures" / "make_big_pstats.py"
    subprocess.run(
        [sys.executable, str(maker), str(big), "--functions", "3000"],
        check=True,
        capture_output=True,
    )
    assert big.stat().st_size >= 256 * 1024  # preload.MIN_BYTES
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFVIEW_")}
    env.update(QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT), PERFVIEW_PRELOAD="1")
    seen = startup_probe.launch_once(big, env, timeout=120)
    assert "first_page_drawn" in seen, seen
    assert "preload_taken" in seen, seen
    assert seen["preload_taken"] <= seen["loaded"] <= seen["first_page_drawn"]
