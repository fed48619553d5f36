"""Remote paths through `gs://` against a REAL Google Cloud Storage server on 127.0.0.1.

`gcp-storage-emulator` speaks GCS's JSON API over HTTP; gcsfs finds it the way it finds any
emulator, from `STORAGE_EMULATOR_HOST`, with anonymous credentials, so the code under test
passes no options (as for S3 in `test_remote.py`). A second object store, a second protocol:
what `perfview.store.remote` does for a URL does not depend on S3's names for things (GCS has
`md5Hash`/`generation` where S3 has `ETag`).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.store import remote

LOGDIR = Path(__file__).resolve().parents[1] / "data" / "tb_logdir"
TRACE = Path(__file__).resolve().parents[1] / "data" / "torch_cpu_small.pt.trace.json.gz"
BUCKET = "perfview-gcs-test"

emulator = pytest.importorskip(
    "gcp_storage_emulator.server", reason="gcp-storage-emulator (the test extra) is absent"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def gcs() -> Iterator[Any]:
    """A GCS emulator on 127.0.0.1 holding `log/` and one trace; gcsfs pointed at it with
    anonymous credentials (no user config, no metadata-server probe) and without its
    zonal/hierarchical-bucket probe, which asks a gRPC endpoint the emulator does not have."""
    port = _free_port()
    server = emulator.create_server("127.0.0.1", port, in_memory=True, default_bucket=BUCKET)
    server.start()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{port}")
        env.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
        env.setenv("NO_GCE_CHECK", "true")
        env.setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
        env.setenv("FSSPEC_GCS_TOKEN", "anon")
        gcsfs = pytest.importorskip("gcsfs", reason="gcsfs (the remote extra) is absent")
        fs = gcsfs.GCSFileSystem(token="anon", skip_instance_cache=True)
        fs.put(str(LOGDIR), f"{BUCKET}/log", recursive=True)
        fs.put(str(TRACE), f"{BUCKET}/one/{TRACE.name}")
        try:
            yield fs
        finally:
            gcsfs.GCSFileSystem.clear_instance_cache()
            server.stop()


def _rows(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    code = cli.main(["summary", *argv, "--format", "json", "--top", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["rows"]
    return rows


def test_a_log_directory_through_gcs_reads_as_the_local_folder(
    gcs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _rows(capsys, str(LOGDIR), "--view", "runs", "--workers", "1")
    through = _rows(capsys, f"gs://{BUCKET}/log", "--view", "runs", "--workers", "1")
    assert through == local
    assert [(r["run"], r["span"]) for r in through] == [
        ("run1", 1), ("run1", 2), ("run2", 1), ("run2", 2),
    ]  # fmt: skip


def test_a_trace_through_gcs_reads_as_the_local_file(
    gcs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"gs://{BUCKET}/one/{TRACE.name}"
    for view in ("ops", "kernels", "steps"):
        assert _rows(capsys, url, "--view", view) == _rows(capsys, str(TRACE), "--view", view)


def test_a_changed_gcs_object_is_fetched_again_and_an_unchanged_one_is_not(gcs: Any) -> None:
    url = f"gs://{BUCKET}/log/run2"
    first = remote.resolve(url)
    files = sorted(first.glob("*.gz"))
    inodes = [f.stat().st_ino for f in files]
    assert remote.resolve(url) == first
    assert [f.stat().st_ino for f in files] == inodes, "an unchanged object is not fetched"
    key = f"{BUCKET}/log/run2/{files[0].name}"
    gcs.pipe(key, next(LOGDIR.glob("run1/*.gz")).read_bytes())  # new generation and md5
    remote.resolve(url)
    assert files[0].stat().st_ino != inodes[0], "a new version fetches the object again"
    assert files[1].stat().st_ino == inodes[1]
    assert files[0].read_bytes() == gcs.cat(key)


def test_a_missing_gcs_object_is_one_sentence(gcs: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["summary", f"gs://{BUCKET}/no/such.json"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_the_output_names_the_url_not_the_cache_folder(
    gcs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    for url in (f"gs://{BUCKET}/one/{TRACE.name}", f"gs://{BUCKET}/log"):
        assert cli.main(["summary", url, "--format", "json", "--top", "1"]) == 0
        assert json.loads(capsys.readouterr().out)["path"] == url
    url = f"gs://{BUCKET}/one/{TRACE.name}"
    assert cli.main(["summary", url, "--top", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"{url} · ")
