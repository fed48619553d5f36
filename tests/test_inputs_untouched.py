"""Nothing lost: perfview never writes the files it opens, and what it writes appears whole.

Every sample is loaded headless and opened in every view of the main window; afterwards each
file has the same SHA-256 and mtime, and its folder holds no new file (no sidecar, no cache,
no lock). Writes perfview does make (table exports, recorded profiles) go through a temp file
and a rename, so a failure midway leaves the previous file intact and no temp file behind.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest

from perfview.core import atomic
from tests.conftest import DATA, SAMPLES

LOAD_TIMEOUT_MS = 60_000


def _inputs() -> list[Path]:
    root = SAMPLES if SAMPLES.is_dir() else DATA
    return sorted(
        p for p in root.rglob("*") if p.is_file() and p.name != "SOURCES.md" and p.suffix != ".py"
    )


def _snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Relative path → (sha256, mtime_ns) of every file under `folder`."""
    return {
        str(p.relative_to(folder)): (
            hashlib.sha256(p.read_bytes()).hexdigest(),
            p.stat().st_mtime_ns,
        )
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of every sample (mtimes kept), with caches and settings pointed into tmp."""
    folder = tmp_path / "inputs"
    for path in _inputs():
        target = folder / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PERFVIEW_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("PERFVIEW_STATE_DIR", str(tmp_path / "state"))
    return folder


def test_headless_loads_leave_inputs_untouched(inputs: Path) -> None:
    from perfview import loaders

    before = _snapshot(inputs)
    loaded = 0
    for rel in before:
        try:
            loaders.load(inputs / rel)
            loaded += 1
        except loaders.LoadError:
            pass
    assert loaded >= len(before) // 2
    assert _snapshot(inputs) == before


@pytest.mark.gui
def test_every_view_leaves_inputs_untouched(qtbot: object, inputs: Path) -> None:
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    before = _snapshot(inputs)
    ini = str(inputs.parent / "settings.ini")
    window = MainWindow(Settings(QSettings(ini, QSettings.Format.IniFormat)))
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    window.show()
    views = 0
    ended: list[str] = []
    window.document_opened.connect(lambda _tab: ended.append("opened"))
    window.load_failed.connect(lambda _path, _message: ended.append("failed"))
    for rel in before:
        path = inputs / rel
        count = len(ended)
        window.open_path(path)
        qtbot.waitUntil(lambda n=count: len(ended) > n, timeout=LOAD_TIMEOUT_MS)  # type: ignore[attr-defined]
        tab = window.tabs_controller.tab_for_path(path)
        if tab is None:
            continue
        for name in tab.view_names():
            assert tab.show_view(name)
            QApplication.processEvents()
            views += 1
        window.tabs_controller.close_tab(window.tabs.indexOf(tab))
    qtbot.waitUntil(lambda: not window.status_controller.is_loading(), timeout=LOAD_TIMEOUT_MS)  # type: ignore[attr-defined]
    window.close()
    assert views >= len(before)
    assert _snapshot(inputs) == before


# ---------------------------------------------------------------------------- atomic writes


def _write_then_fail(path: Path) -> None:
    with atomic.atomic_write(path, "w") as fh:
        fh.write("half of the new con")
        raise RuntimeError("disk full")


def _record_then_fail(path: Path) -> None:
    with atomic.atomic_path(path, keep_partial=True) as tmp:
        tmp.write_bytes(b"partial")
        raise KeyError("the script failed")


def test_atomic_write_replaces_whole_or_not_at_all(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    atomic.write_text(path, "old\n")
    with pytest.raises(RuntimeError):
        _write_then_fail(path)
    assert path.read_text() == "old\n"
    atomic.write_bytes(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temp file left
    assert path.stat().st_mode & 0o777 == 0o644 or sys.platform == "win32"


def test_atomic_path_keeps_suffix_and_partial_output(tmp_path: Path) -> None:
    target = tmp_path / "trace.json.gz"
    with atomic.atomic_path(target) as tmp:
        assert tmp.parent == tmp_path
        assert tmp.name.endswith("-trace.json.gz")  # torch picks gzip by the suffix
        assert not target.exists()
        tmp.write_bytes(b"complete")
    assert target.read_bytes() == b"complete"
    # A failing recorder keeps what it wrote when asked to (keep_partial) …
    with pytest.raises(KeyError):
        _record_then_fail(target)
    assert target.read_bytes() == b"partial"
    # … and an empty result never replaces a good file.
    with atomic.atomic_path(target):
        pass
    assert target.read_bytes() == b"partial"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.json.gz"]


def test_recorder_replaces_its_output_atomically(tmp_path: Path) -> None:
    from perfview.runner import record

    script = tmp_path / "work.py"
    script.write_text("def f():\n    return sum(range(1000))\n\nf()\n")
    out = tmp_path / "out" / "run.prof"
    out.parent.mkdir()
    out.write_bytes(b"previous run")
    code = record.main(["--mode", "cprofile", "-o", str(out), "--", str(script)])
    assert code == 0
    assert out.read_bytes()[:1] == b"\xfb"  # a complete pstats dump replaced the old file
    assert [p.name for p in out.parent.iterdir()] == ["run.prof"]


@pytest.mark.gui
def test_export_table_as_csv(
    qtbot: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QSettings

    from perfview.qt.file_types import example_path
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    window = MainWindow(Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)  # type: ignore[attr-defined]
    action = window.menus_controller.actions_by_id["export_table"]
    assert action in window.menus_controller.menus["file"].actions()
    assert not action.isEnabled()  # no document yet
    with qtbot.waitSignal(window.document_opened, timeout=LOAD_TIMEOUT_MS):  # type: ignore[attr-defined]
        window.open_path(example_path())
    assert action.isEnabled()
    tab = window.tabs_controller.current_tab()
    assert tab is not None
    assert tab.show_view("functions")
    out = tmp_path / "functions.csv"
    assert window.commands.export_current_table(out) == out
    lines = out.read_text().splitlines()
    assert lines[0].startswith("function,") or "function" in lines[0]
    assert len(lines) > 5

    # A failing write keeps the previous export intact and says so.
    def broken(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "write_text", broken)
    assert window.commands.export_current_table(out) is None
    assert "No space left on device" in window.error_bar.label.text()
    assert out.read_text().splitlines() == lines
