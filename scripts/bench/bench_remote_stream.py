#!/usr/bin/env python3
"""A remote trace parsed while it downloads vs. downloaded whole first, from a real S3 server.

    python scripts/bench/bench_remote_stream.py TRACE.json [--repeat 2]

Starts moto's S3 server in a process of its own on 127.0.0.1, uploads TRACE (a plain trace;
make one with bench_replicate.py), then opens `s3://.../TRACE` in a fresh process per run,
with an empty cache each time: `whole` downloads the file first and then parses it (what
perfview did before `perfview.streamed`), `streamed` parses it as it arrives. Each run
prints the seconds from the process's start (imports included) to the first parsed window
(the scanner's first progress report past 0 MB), to the end of the download and to the
default summary table made (`perfview summary URL`'s work), and the load average beside
them. Needs moto[server] and s3fs.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "bench"

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from perfview.store import remote
mode, url = sys.argv[1], sys.argv[2]
first = [None]
def progress(fraction, message):
    if first[0] is None and message.startswith("scanned") and not message.startswith("scanned 0 "):
        first[0] = time.perf_counter() - t0
from perfview import streamed
from perfview.core.pages import summary
from perfview.documents import open_document
local = remote.resolve(url, stream=mode == "streamed")
fetched = time.perf_counter() - t0
arriving = streamed.pending(local)
downloaded = [fetched]
if arriving is not None:
    import threading
    def note():
        arriving.whole()
        downloaded[0] = time.perf_counter() - t0
    threading.Thread(target=note, daemon=True).start()
doc = open_document(local, progress=progress)
table = summary.summarize(doc.bundle)
done = time.perf_counter() - t0
print(json.dumps({"first_window_s": first[0], "downloaded_s": downloaded[0], "summary_s": done,
                  "events": int(len(doc.bundle.timeline.events))}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path, help="a plain (not gzip) trace, ~100 MB")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each mode (interleaved)")
    args = parser.parse_args()
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    env = dict(os.environ)
    env.update(
        AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{port}",
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)  # the server starting: a benchmark, not a test
        os.environ.update(env)
        import fsspec

        fs = fsspec.filesystem("s3", skip_instance_cache=True)
        fs.mkdir(BUCKET)
        fs.put(str(args.trace), f"{BUCKET}/{args.trace.name}")
        url = f"s3://{BUCKET}/{args.trace.name}"
        print(f"{args.trace.name}: {args.trace.stat().st_size / 1e6:,.0f} MB from {url}")
        for _ in range(args.repeat):
            for mode in ("whole", "streamed"):
                with tempfile.TemporaryDirectory(prefix="perfview-bench-") as cache:
                    env["PERFVIEW_CACHE_DIR"] = cache
                    done = subprocess.run(
                        [sys.executable, "-c", CHILD, mode, url], cwd=ROOT, env=env,
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                figures = json.loads(done.stdout.strip().splitlines()[-1])
                load = os.getloadavg()[0]
                print(
                    f"{mode:9} first window {figures['first_window_s']:.2f} s, "
                    f"downloaded {figures['downloaded_s']:.2f} s, "
                    f"summary done {figures['summary_s']:.2f} s "
                    f"({figures['events']:,} events), load average {load:.1f}"
                )
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
