"""URLs in the window (`perfview.qt.remote_open`): `perfview s3://…` and the Open dialog's
URLs are fetched in a worker, then opened as the local path they became; against the real
moto S3 server of tests/store/test_remote.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, QUrl

from tests.store.test_remote import BUCKET, LOGDIR, s3  # noqa: F401  (the S3 server fixture)

pytestmark = pytest.mark.gui


def _window(qtbot: Any, tmp_path: Path) -> Any:
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Settings(store))
    qtbot.addWidget(window)
    return window


def test_an_s3_log_directory_opens_in_the_run_browser(
    qtbot: Any,
    tmp_path: Path,
    s3: Any,  # noqa: F811
) -> None:
    from perfview.qt.views.job_view import JobOpening
    from perfview.qt.views.run_browser import RunBrowser

    window = _window(qtbot, tmp_path)
    fetch = window.open_path(f"s3://{BUCKET}/log")
    with qtbot.waitSignal(fetch.done, timeout=60000):
        pass
    openings = window.findChildren(JobOpening)  # the local mirror, opened as any folder
    assert len(openings) == 1
    with qtbot.waitSignal(openings[0].opened, timeout=60000):
        pass
    view = window.tabs.currentWidget()
    assert isinstance(view, RunBrowser)
    names = [view.tree.topLevelItem(i).text(0) for i in range(view.tree.topLevelItemCount())]
    assert names == ["run1", "run2"]
    assert len(view.span_items()) == len(list(LOGDIR.glob("*/*.gz")))


def test_a_url_that_cannot_be_read_is_one_sentence_in_the_window(
    qtbot: Any,
    tmp_path: Path,
    s3: Any,  # noqa: F811
) -> None:
    window = _window(qtbot, tmp_path)
    with qtbot.waitSignal(window.load_failed, timeout=60000) as failed:
        window.open_path(f"s3://{BUCKET}/no/such/run")
    path, message = failed.args
    assert path == f"s3://{BUCKET}/no/such/run"
    assert message == f"s3://{BUCKET}/no/such/run does not exist"


def test_the_open_dialog_passes_urls_through() -> None:
    from perfview.qt.remote_open import chosen

    local = QUrl.fromLocalFile(str(LOGDIR / "run1"))
    assert chosen([QUrl("s3://bucket/log"), local]) == ["s3://bucket/log", str(LOGDIR / "run1")]


def test_the_open_dialog_offers_remote_schemes_and_opens_the_url(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    from perfview.qt import remote_open

    window = _window(qtbot, tmp_path)
    asked: dict[str, Any] = {}

    def dialog(*args: Any, **kwargs: Any) -> tuple[list[QUrl], str]:
        asked.update(kwargs)
        return [QUrl("s3://bucket/log")], ""

    opened: list[Any] = []
    monkeypatch.setattr(QFileDialog, "getOpenFileUrls", dialog)
    monkeypatch.setattr(window.open_controller, "open_path", opened.append)
    window.open_controller.open_dialog()
    assert asked["supportedSchemes"] == remote_open.SCHEMES
    assert opened == ["s3://bucket/log"]


def test_a_trace_url_opens_in_a_tab_parsed_as_it_downloads(
    qtbot: Any,
    tmp_path: Path,
    s3: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file URL: its download started in the fetch task, the load task parses it as it
    arrives (the scanner forced on this small file), the tab equals the local file's."""
    import dataclasses
    import threading

    import perfview.loaders.trace.loader as trace_loader
    from perfview import loaders, streamed
    from perfview.store import remote_download
    from tests.conftest import SAMPLES

    source = SAMPLES / "kineto_cpu" / "dtu_jc_resnet18_cpu_trace.json"
    if not source.is_file():
        pytest.skip(f"the sample {source} is absent")
    scanner = dataclasses.replace(trace_loader.SCANNER, min_bytes=0)
    monkeypatch.setattr(trace_loader, "SCANNER", scanner)
    s3.put(str(source), f"{BUCKET}/one/{source.name}")
    taken: list[Path] = []
    took = threading.Event()
    take, add = streamed.take, streamed.Arriving.add

    def watched(path: Any) -> Any:
        arriving = take(path)
        if arriving is not None:
            taken.append(Path(path))
            took.set()
        return arriving

    def held(self: streamed.Arriving, data: Any) -> None:
        if self.have >= 80 * 1024:  # past the head that detection reads: held until taken
            took.wait(60)
        add(self, data)

    monkeypatch.setattr(streamed, "take", watched)
    monkeypatch.setattr(streamed.Arriving, "add", held)
    monkeypatch.setattr(remote_download, "CHUNK", 16 * 1024)  # pieces of 16 KB
    window = _window(qtbot, tmp_path)
    with qtbot.waitSignal(window.document_opened, timeout=60000) as opened:
        window.open_path(f"s3://{BUCKET}/one/{source.name}")
    bundle = opened.args[0].document.bundle
    assert [p.name for p in taken] == [source.name], "the load took the arriving download"
    local = loaders.load(source, options=loaders.FRESH)
    assert bundle.counts == local.counts
    assert bundle.timeline.events["name"].tolist() == local.timeline.events["name"].tolist()
