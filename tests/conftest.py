"""Shared fixtures. Sets the offscreen Qt platform before anything imports Qt."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Nothing a test does may touch the user's real settings, caches, runs or crash log.
_SANDBOX = Path(tempfile.mkdtemp(prefix="perfview-tests-"))
atexit.register(shutil.rmtree, _SANDBOX, ignore_errors=True)  # a run leaves nothing behind
for _var, _sub in (
    ("PERFVIEW_STATE_DIR", "state"),
    ("PERFVIEW_CACHE_DIR", "cache"),
    ("PERFVIEW_RUNS_DIR", "runs"),
):
    os.environ.setdefault(_var, str(_SANDBOX / _sub))
os.environ.setdefault("PERFVIEW_SETTINGS", str(_SANDBOX / "settings.ini"))

import pytest  # noqa: E402  (the environment above must be set before any import)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SAMPLES = Path(os.environ.get("PERFVIEW_SAMPLES", ROOT.parent / "shared" / "samples"))


@pytest.fixture(autouse=True)
def _collect_after_qt_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that drew widgets, collect its cyclic garbage here, between tests: left
    for a later automatic collection, it can be freed inside a PySide callback (a signal's
    disconnect) of another test, where destroying QObjects deadlocks on Qt's connection lock
    (the window collects at safe points for the same reason, `perfview.qt.let_go`)."""
    yield
    if "qtbot" in request.fixturenames:
        gc.collect()


_MODAL_DIALOGS = (
    ("QFileDialog", ("getOpenFileName", "getOpenFileNames", "getOpenFileUrls",
                     "getExistingDirectory", "getSaveFileName")),
    ("QInputDialog", ("getText", "getItem")),
)  # fmt: skip


@pytest.fixture(autouse=True)
def _no_modal_dialogs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A modal dialog no test answers waits forever offscreen (a whole suite hung on one):
    in a Qt test every static dialog call fails at once unless the test patched it."""
    if "qtbot" not in request.fixturenames:
        return
    from PySide6 import QtWidgets

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a test opened a modal dialog it did not answer (patch it)")

    for cls_name, methods in _MODAL_DIALOGS:
        cls = getattr(QtWidgets, cls_name)
        for method in methods:
            monkeypatch.setattr(cls, method, refuse)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: tiny fixtures made by scripts/fixtures/make_fixtures.py."""
    return DATA


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    """../shared/samples (real files from other projects); skips when a clone has none."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real samples folder {SAMPLES} is absent")
    return SAMPLES


def sample(rel: str) -> Path:
    """Path of one real sample, skipping the calling test when it is missing."""
    path = SAMPLES / rel
    if not path.exists():
        pytest.skip(f"sample {rel} is absent ({SAMPLES})")
    return path
