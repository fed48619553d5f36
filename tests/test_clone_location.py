"""The suite passes wherever the clone lives: a copy of the working tree in a folder named
`perfview` (what `git clone` makes) runs the tests that look at file paths.

A test that looks for the text "perfview" in a path, or for this machine's user or folders,
passes in CI's folder and fails in a newcomer's clone; this test is that newcomer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES

# Tests that compare paths of recorded frames, examples and samples with the package's folder.
PATH_SENSITIVE = [
    "tests/runner/test_record.py",
    "tests/test_examples.py",
    "tests/test_architecture.py",
]


def _working_tree_files() -> list[str]:
    """Tracked files and untracked ones git does not ignore, as a clone of this change has."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.mark.slow
def test_the_path_tests_pass_in_a_clone_named_perfview(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to copy the working tree from")
    clone = tmp_path / "perfview"
    for name in _working_tree_files():
        target = clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    if SAMPLES.is_dir():  # ../shared beside the clone, as a developer's checkout has it
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "samples").symlink_to(SAMPLES, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k != "PERFVIEW_SAMPLES"}
    imported = subprocess.run(
        [sys.executable, "-c", "import perfview; print(perfview.__file__)"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(imported).resolve().is_relative_to(clone.resolve())  # the copy, not this tree
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PATH_SENSITIVE],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
