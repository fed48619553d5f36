"""The window's tests run with the window's garbage collector: collections on the GUI thread
only (`perfview.qt.collector`), as `perfview` itself runs. Installed for this package only:
other tests run no event loop, which the collector needs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")


@pytest.fixture(scope="package", autouse=True)
def gui_thread_collector(qapp: object) -> Iterator[None]:
    from perfview.qt import collector

    collector.install()
    yield
    collector.uninstall()
