"""The start-up preload (`perfview.preload`, issue 20): a big `.prof` on the command line is
parsed in a forked child while the window imports, and the load task takes the child's
Bundle, which must equal a load in this process; anything unusual falls back to the
ordinary load. Forks run in a fresh interpreter (no threads at fork time, as in
`perfview.__main__`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from perfview import preload

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")


@pytest.fixture(autouse=True)
def _always(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests check what is preloaded, not whether this machine is busy right now."""
    monkeypatch.setenv(preload.ENV, "1")


def test_wanted_only_for_one_big_pstats_file_opened_plainly(tmp_path: Path) -> None:
    prof = DATA / "module_eval_collision.prof"
    assert preload.wanted([str(prof)], min_bytes=0) == prof
    assert preload.wanted(["--new-window", str(prof)], min_bytes=0) == prof
    assert preload.wanted([str(prof)]) is None  # 13 kB: loads in milliseconds in-process
    assert preload.wanted([str(prof), str(DATA / "recursion.prof")], min_bytes=0) is None
    for option in (["--screenshot", "out.png"], ["--compare", str(prof)], ["--view=tree"]):
        assert preload.wanted([*option, str(prof)], min_bytes=0) is None
    text = tmp_path / "notes.prof"
    text.write_text("not a profile")
    assert preload.wanted([str(text)], min_bytes=0) is None
    assert preload.wanted([str(tmp_path / "missing.prof")], min_bytes=0) is None


def test_never_when_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(preload.ENV, "0")
    assert preload.wanted([str(DATA / "module_eval_collision.prof")], min_bytes=0) is None


CHILD = """
import os, sys, time
from pathlib import Path
from perfview import preload
path, mode = Path(sys.argv[1]), sys.argv[2]
assert preload.start([str(path)], min_bytes=0)
if mode == "changed":
    time.sleep(0.2)
    os.utime(path, ns=(0, 0))
if mode == "discard":
    preload.discard_all()
    print("none" if preload.take(path) is None and not preload.pending() else "left")
    raise SystemExit
got = preload.take(path)
if got is None:
    print("none")
    raise SystemExit
from perfview.loaders import load
want = load(path)
assert got.path == path and got.format == want.format == "pstats"
assert got.counts == want.counts and got.warnings == want.warnings
assert got.duration_ns == want.duration_ns
assert got.profile.functions.equals(want.profile.functions)
assert got.profile.edges.equals(want.profile.edges)
for name in ("parent", "frame"):
    assert (getattr(got.tree, name) == getattr(want.tree, name)).all()
for name, values in want.tree.metrics.items():
    assert (got.tree.metrics[name] == values).all(), name
assert got.tree.frames.equals(want.tree.frames)
print("equal", len(want.profile.functions))
"""


def _run(path: Path, mode: str = "plain") -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), mode],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_the_childs_bundle_equals_a_load_here() -> None:
    assert _run(DATA / "module_eval_collision.prof").startswith("equal ")


def test_the_childs_bundle_equals_a_load_here_on_a_real_sample() -> None:
    from tests.conftest import sample

    path = sample("pstats/hypothesis_csv_combined.prof")
    if not path.exists():
        pytest.skip("the shared samples are not here")
    assert _run(path).startswith("equal ")


def test_not_pstats_inside_gives_nothing_so_the_window_loads_and_reports_it(
    tmp_path: Path,
) -> None:
    fake = tmp_path / "fake.prof"
    fake.write_bytes(b'{"traceEvents": []}')  # a JSON file named .prof: another loader's
    assert _run(fake) == "none"


def test_a_file_changed_since_the_fork_is_loaded_again(tmp_path: Path) -> None:
    copy = tmp_path / "copy.prof"
    copy.write_bytes((DATA / "module_eval_collision.prof").read_bytes())
    assert _run(copy, "changed") == "none"


def test_a_child_nobody_takes_from_is_stopped() -> None:
    assert _run(DATA / "module_eval_collision.prof", "discard") == "none"
