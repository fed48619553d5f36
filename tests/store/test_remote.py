"""Remote paths (`perfview.store.remote`) against a REAL S3 server on 127.0.0.1.

moto's `ThreadedMotoServer` speaks the S3 protocol over HTTP; s3fs finds it the way it finds
any endpoint, from the environment (`AWS_ENDPOINT_URL_S3`, dummy keys), so the code under test
passes no options. The server holds the log directory written by the real
`tensorboard_trace_handler` (tests/data/tb_logdir) and a real two-rank sample; every view
read through `s3://` must equal the local folder's, on this machine and on a Dask cluster
whose workers fetch the URLs themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perfview import cli
from perfview.core.pages import summary
from perfview.store import remote
from tests.conftest import ROOT, SAMPLES

LOGDIR = Path(__file__).resolve().parents[1] / "data" / "tb_logdir"
RANKS = SAMPLES / "ranks" / "hta_sampled_2of128"
BUCKET = "perfview-test"

moto_server = pytest.importorskip("moto.server", reason="moto[server] (the test extra) is absent")
pytest.importorskip("s3fs", reason="s3fs (the remote extra) is absent")


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 (a free port), the environment pointing s3fs at it with
    dummy credentials (no user config read), a bucket holding `log/` and `ranks/`; the
    server stopped and the environment restored when the module's tests end."""
    import fsspec

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    # moto keeps its buckets per process, not per server: an earlier module's are still there
    urllib.request.urlopen(
        urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST"), timeout=30
    ).close()
    empty = tmp_path_factory.mktemp("aws") / "none"
    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}",
            "AWS_CONFIG_FILE": str(empty), "AWS_SHARED_CREDENTIALS_FILE": str(empty),
        }.items():  # fmt: skip
            env.setenv(name, value)
        fs = fsspec.filesystem("s3", skip_instance_cache=True)
        fs.clear_instance_cache()  # no filesystem made before this environment is reused
        fs.mkdir(BUCKET)
        fs.put(str(LOGDIR), f"{BUCKET}/log", recursive=True)
        if RANKS.is_dir():
            fs.put(str(RANKS), f"{BUCKET}/ranks", recursive=True)
        try:
            yield fs
        finally:
            fs.clear_instance_cache()
            server.stop()


def _rows(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    code = cli.main(["summary", *argv, "--format", "json", "--top", "0"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows: list[dict[str, Any]] = json.loads(out)["rows"]
    return rows


def test_a_log_directory_through_s3_reads_as_the_local_folder(
    s3: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _rows(capsys, str(LOGDIR), "--view", "runs", "--workers", "1")
    through = _rows(capsys, f"s3://{BUCKET}/log", "--view", "runs", "--workers", "1")
    assert through == local
    assert [r["run"] for r in through] == ["run1", "run1", "run2", "run2"]
    mirror = remote.mirror_dir(f"s3://{BUCKET}/log")
    assert sorted(p.name for p in mirror.rglob("*.gz")) == sorted(
        p.name for p in LOGDIR.rglob("*.gz")
    )


def test_a_job_through_s3_reads_as_the_local_folder(
    s3: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    if not RANKS.is_dir():
        pytest.skip(f"the real rank sample {RANKS} is absent")
    for view in summary.views_for("job"):
        local = _rows(capsys, str(RANKS), "--view", view, "--workers", "1")
        through = _rows(capsys, f"s3://{BUCKET}/ranks", "--view", view, "--workers", "1")
        assert through == local, view
    one = _rows(capsys, f"s3://{BUCKET}/ranks/rank-0.json.gz", "--view", "kernels")
    assert one == _rows(capsys, str(RANKS / "rank-0.json.gz"), "--view", "kernels")


def test_a_mirrored_file_is_fetched_again_only_when_its_etag_changes(s3: Any) -> None:
    url = f"s3://{BUCKET}/log/run1"
    first = remote.resolve(url)
    files = sorted(first.glob("*.gz"))
    inodes = [f.stat().st_ino for f in files]
    assert remote.resolve(url) == first
    assert [f.stat().st_ino for f in files] == inodes, "an unchanged object is not fetched"
    key = f"{BUCKET}/log/run1/{files[0].name}"
    original = s3.cat(key)
    s3.pipe(key, next(LOGDIR.glob("run2/*.gz")).read_bytes())  # new content, new ETag
    try:
        remote.resolve(url)
        assert files[0].stat().st_ino != inodes[0], "a new ETag fetches the object again"
        assert files[1].stat().st_ino == inodes[1]
        assert files[0].read_bytes() == s3.cat(key)
    finally:
        s3.pipe(key, original)
        remote.resolve(url)


def test_a_job_on_a_dask_cluster_reads_the_urls_on_its_workers(
    s3: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed", reason="the 'cluster' extra is absent")
    pytest.importorskip("pyarrow", reason="the 'cluster' extra (pyarrow) is absent")
    if not RANKS.is_dir():
        pytest.skip(f"the real rank sample {RANKS} is absent")
    workers_cache = tmp_path / "workers-cache"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PERFVIEW_CACHE_DIR", str(workers_cache))  # the workers' own cache
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None,
        )  # fmt: skip
    with cluster:
        url = f"s3://{BUCKET}/ranks"
        for view in ("ranks", "collectives", "stragglers"):
            local = _rows(capsys, str(RANKS), "--view", view, "--workers", "1")
            argv = [url, "--view", view, "--cluster", cluster.scheduler_address]
            through = _rows(capsys, *argv, "--output", str(tmp_path / "out"))
            assert through == local, view
    fetched = sorted(p.name for p in workers_cache.rglob("rank-*.json.gz"))
    assert fetched == ["rank-0.json.gz", "rank-1.json.gz"], "each worker fetched its rank"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    ranks = [f"{url}/rank-{i}.json.gz" for i in (0, 1)]
    assert [r["path"] for r in manifest["ranks"]] == ranks, "what the workers were given"


def test_a_missing_object_is_one_sentence(s3: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["summary", f"s3://{BUCKET}/no/such.json"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().count("\n") == 0
    assert "does not exist" in err


def test_a_scheme_no_filesystem_knows_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["summary", "nosuchfs://bucket/log", "--view", "runs"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().count("\n") == 0
    assert "pip install 'perfview[remote]'" in err


def test_without_fsspec_a_url_says_how_to_install_it() -> None:
    """fsspec made unimportable in a child process (as tests/test_architecture.py blocks Qt):
    the same one sentence, exit code 2, no traceback."""
    code = (
        "import sys; sys.modules['fsspec'] = None\n"
        "from perfview import cli\n"
        "sys.exit(cli.main(['summary', 's3://bucket/log', '--view', 'runs']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "perfview: cannot open s3://bucket/log: reading s3:// paths needs the 'remote' extra: "
        "pip install 'perfview[remote]'"
    )


def test_file_urls_and_paths_are_read_in_place(tmp_path: Path) -> None:
    assert remote.resolve(LOGDIR.as_uri()) == LOGDIR
    assert remote.resolve(str(LOGDIR)) == LOGDIR
    assert not remote.is_url("C://profiles/a.json")  # a Windows drive, not a scheme


def test_a_key_cannot_lead_the_mirror_out_of_the_cache() -> None:
    mirror = remote.mirror_dir("s3://bucket/../../etc/x.json")
    top = remote.mirror_dir("s3://bucket")
    assert mirror.is_relative_to(top)
    assert ".." not in mirror.parts


def test_a_followed_folder_fetches_an_object_once_it_stood_still(s3: Any) -> None:
    """`mirror_settled` (one listing of a followed log directory): a new or changed object
    is fetched only when the next listing shows it the same size and version again."""
    url = f"s3://{BUCKET}/follow"
    first, later = sorted(LOGDIR.glob("run1/*.gz"))
    s3.put(str(first), f"{BUCKET}/follow/run1/{first.name}")
    top = remote.mirror_tree(url)
    assert remote.mirrored_from(top) == url
    listed, fetched = remote.mirror_settled(url, {})
    assert fetched == [], "the open mirrored what was there"
    key = f"{BUCKET}/follow/run1/{later.name}"
    data = later.read_bytes()
    s3.pipe(key, data[:100])  # being written
    listed, fetched = remote.mirror_settled(url, listed)
    assert fetched == [], "new: not fetched before it stood still"
    s3.pipe(key, data)  # grew
    listed, fetched = remote.mirror_settled(url, listed)
    assert fetched == [], "changed: not fetched before it stood still"
    listed, fetched = remote.mirror_settled(url, listed)
    assert [p.name for p in fetched] == [later.name]
    assert fetched[0].read_bytes() == data
    assert remote.mirror_settled(url, listed)[1] == [], "fetched once"


def test_mirrored_files_count_in_the_caches_size_bound(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mirror lives inside the cache's bound (`PERFVIEW_CACHE_MAX_MB`): fetching past it
    evicts the least recently used mirrored file, a file used again counting as recent."""
    from perfview.store import mirror_files

    monkeypatch.setenv("PERFVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(mirror_files, "TOUCH_S", -1.0)  # every use marked (else once a minute)
    files = sorted(LOGDIR.glob("*/*.gz"))[:3]
    sizes = [f.stat().st_size for f in files]
    monkeypatch.setenv("PERFVIEW_CACHE_MAX_MB", str((sizes[0] + sizes[1] + 1024) / 2**20))
    urls = [f"s3://{BUCKET}/log/{f.parent.name}/{f.name}" for f in files]
    a, b = remote.resolve(urls[0]), remote.resolve(urls[1])
    assert a.is_file(), "two fit"
    assert b.is_file(), "two fit"
    assert remote.resolve(urls[0]) == a  # used again: now the more recent of the two
    c = remote.resolve(urls[2])
    assert c.is_file()
    assert a.is_file()
    assert not b.exists(), "the least recently used mirrored file went"
    assert not [p for p in b.parent.iterdir() if p.name.startswith(f".{b.name}")]
    assert remote.resolve(urls[1]).read_bytes() == files[1].read_bytes(), "fetched again"
    assert not (c.exists() and a.exists()), "still within the bound"
