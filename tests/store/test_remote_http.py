"""`http(s)://` and `file://` end to end: a log directory and a trace served by a real HTTP
server on 127.0.0.1 (the standard library's, on a thread; fsspec's HTTPFileSystem lists a
folder from its directory index page) read as the local folder and file, view for view, and
so do their `file://` URLs."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.store import remote
from tests.conftest import SAMPLES

pytest.importorskip("fsspec", reason="fsspec (the remote extra) is absent")
pytest.importorskip("aiohttp", reason="aiohttp (fsspec's HTTP filesystem) is absent")

DATA = Path(__file__).resolve().parents[1] / "data"
LOGDIR = DATA / "tb_logdir"
TRACE = SAMPLES / "kineto_cpu" / "dtu_jc_resnet18_cpu_trace.json"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """tests/data/tb_logdir and a real trace under one folder, served on 127.0.0.1 (a free
    port); the server stopped when the module's tests end."""
    root = tmp_path_factory.mktemp("www")
    (root / "log").symlink_to(LOGDIR, target_is_directory=True)
    if TRACE.is_file():
        (root / TRACE.name).symlink_to(TRACE)
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="test-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))


def _rows(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    code = cli.main(["summary", *argv, "--format", "json", "--top", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["rows"]
    return rows


@pytest.mark.parametrize("url", ["{base}/log/", "{base}/log", "{file}"])
def test_a_log_directory_over_http_and_file_urls_reads_as_the_local_folder(
    served: str, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = url.format(base=served, file=LOGDIR.as_uri())
    local = _rows(capsys, str(LOGDIR), "--view", "runs", "--workers", "1")
    assert _rows(capsys, source, "--view", "runs", "--workers", "1") == local
    assert [r["run"] for r in local] == ["run1", "run1", "run2", "run2"]


def test_a_trace_over_http_and_file_urls_reads_as_the_local_file(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if not TRACE.is_file():
        pytest.skip(f"the sample {TRACE} is absent")
    for view in ("operators", "kernels", "steps"):
        local = _rows(capsys, str(TRACE), "--view", view)
        assert _rows(capsys, f"{served}/{TRACE.name}", "--view", view) == local, view
        assert _rows(capsys, TRACE.as_uri(), "--view", view) == local, view
    assert remote.resolve(f"{served}/{TRACE.name}").read_bytes() == TRACE.read_bytes()


def test_a_missing_http_object_is_one_sentence(
    served: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["summary", f"{served}/no/such.json"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().count("\n") == 0
    assert "does not exist" in err
