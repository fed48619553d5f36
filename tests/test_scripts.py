"""Every script under scripts/ answers `--help` and writes nothing while doing so.

A newcomer's first move with a script is `--help`; a fixture maker that regenerated tests/data
or a benchmark that wrote gigabytes on `--help` would be a trap. Each script runs in a fresh
process from an empty working directory: exit 0, some usage text, no file in that directory,
and no file of the repository's tests/data or docs/ touched. Scripts parse their arguments
before importing anything heavy (torch, Qt), so this stays quick.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(
    p for p in (ROOT / "scripts").rglob("*") if p.suffix in (".py", ".sh") and p.is_file()
)


def _stamps(*folders: Path) -> dict[Path, int]:
    """Every file under the folders with its modification time: what a script must not touch."""
    return {p: p.stat().st_mtime_ns for folder in folders for p in folder.rglob("*") if p.is_file()}


def test_scripts_are_sorted_into_their_folders() -> None:
    """Benchmarks, fixture makers and probes live in their own folders; only the suite's
    command (the README's check.sh) and the desktop installer stay at the top."""
    top = {p.name for p in (ROOT / "scripts").iterdir() if p.is_file()}
    assert top == {"check.sh", "install_desktop.sh"}
    folders = {p.parent.name for p in SCRIPTS if p.parent != ROOT / "scripts"}
    assert folders == {"bench", "fixtures", "probes"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT / "scripts")))
def test_script_answers_help_without_writing(script: Path, tmp_path: Path) -> None:
    watched = _stamps(ROOT / "tests" / "data", ROOT / "docs")
    runner = ["bash"] if script.suffix == ".sh" else [sys.executable]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [*runner, str(script), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip(), "--help printed nothing"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert _stamps(ROOT / "tests" / "data", ROOT / "docs") == watched
