"""A remote log directory is followed while it is open (`store.remote_follow`): object stores
send no change notices, so a thread lists the folder (every 0.05 s here) and fetches the
files that stopped changing into the mirror, where the run browser's live watch reads each
once whole. Against the real moto S3 server of tests/store/test_remote.py; the test waits on
the watch's signals, never on time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from tests.qt.test_remote_open import _window
from tests.store.test_remote import BUCKET, LOGDIR, s3  # noqa: F401  (the S3 server fixture)

pytestmark = pytest.mark.gui


def test_a_remote_log_directory_shows_new_spans_once_uploaded_whole(
    qtbot: Any,
    tmp_path: Path,
    s3: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from perfview.qt.views.job_view import JobOpening
    from perfview.qt.views.run_browser import RunBrowser
    from perfview.store import remote_follow

    monkeypatch.setenv(remote_follow.ENV, "0.05")
    for path in sorted((LOGDIR / "run1").iterdir()):
        s3.put(str(path), f"{BUCKET}/live/run1/{path.name}")
    window = _window(qtbot, tmp_path)
    fetch = window.open_path(f"s3://{BUCKET}/live")
    with qtbot.waitSignal(fetch.done, timeout=60000):
        pass
    (opening,) = window.findChildren(JobOpening)
    with qtbot.waitSignal(opening.opened, timeout=60000):
        pass
    view = window.tabs.currentWidget()
    assert isinstance(view, RunBrowser)
    assert len(view.span_items()) == 2
    assert view.watch.follower is not None, "a remote folder is followed"

    data = sorted((LOGDIR / "run2").iterdir())[0].read_bytes()
    name = "vm_4080.1795828099000000000.pt.trace.json.gz"  # a later cycle
    key = f"{BUCKET}/live/run1/{name}"

    def pending(logdir: Any) -> bool:
        return any(p.name == name for p in logdir.pending)

    # an object the training is still writing (HDFS, a local disk: a file can grow there):
    # fetched once it stood still for two listings, and left pending while its gzip is cut
    with qtbot.waitSignal(view.watch.read, timeout=30000, check_params_cb=pending):
        s3.pipe(key, data[: len(data) // 2])
    assert len(view.span_items()) == 2, "a half-written span is not read early"
    with qtbot.waitSignal(view.watch.updated, timeout=30000) as updated:
        s3.pipe(key, data)
    assert [Path(p).name for p in updated.args[1]] == [name]
    assert len(view.span_items()) == 3
    assert view.span_items()[-1].text(0).endswith(name)
    assert "1 new span(s) written" in view.heading.text()
    view.watch.follower.stop()
