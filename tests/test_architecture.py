"""The layering rule: core, store, loaders, documents, jobs, runner and the CLI import without
Qt and without torch.

Checked in a fresh interpreter where `import PySide6` / `pyqtgraph` / `torch` raise ImportError
(a `None` entry in sys.modules does that), so a stray import anywhere in those packages, even
in a module no test happens to import, fails here rather than on a user's headless machine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BLOCKED = ("PySide6", "pyqtgraph", "torch")
HEADLESS_PACKAGES = (
    "perfview.core",
    "perfview.store",
    "perfview.loaders",
    "perfview.documents",
    "perfview.runner",
    "perfview.jobs",
    "perfview.assist",
)

_CHILD = """
import importlib, pkgutil, sys
for name in {blocked!r}:
    sys.modules[name] = None
imported, failed = [], []
names = ["perfview", "perfview.cli"]
for pkg_name in {packages!r}:
    names.append(pkg_name)
    try:
        pkg = importlib.import_module(pkg_name)
    except Exception:
        continue  # reported below with the other failures
    names += [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg_name + ".")]
for name in names:
    try:
        importlib.import_module(name)
        imported.append(name)
    except Exception as exc:
        failed.append(f"{{name}}: {{type(exc).__name__}}: {{exc}}")
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {blocked!r} and sys.modules[m])
print("IMPORTED", len(imported))
for line in failed:
    print("FAILED", line)
for name in leaked:
    print("LEAKED", name)
sys.exit(1 if failed or leaked else 0)
"""


def test_headless_packages_import_without_qt_or_torch() -> None:
    code = _CHILD.format(blocked=BLOCKED, packages=HEADLESS_PACKAGES)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    imported = int(proc.stdout.split("IMPORTED", 1)[1].split()[0])
    assert imported >= 5  # perfview, cli, the three packages at least


def test_cli_summary_runs_without_qt(tmp_path: Path) -> None:
    """`perfview summary` itself (not just the import) must not pull in Qt."""
    code = (
        "import sys\n"
        f"for n in {BLOCKED!r}: sys.modules[n] = None\n"
        "from perfview.cli import main\n"
        "sys.exit(main(['summary', '--help']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "--view" in proc.stdout


def test_import_linter_contracts() -> None:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter (lint-imports) is not installed")
    proc = subprocess.run(
        [exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "KEPT" in proc.stdout


def _import_cycles(package: str) -> list[list[str]]:
    """Strongly connected groups of modules in `package`'s import graph (Tarjan), every
    import counted, deferred ones inside functions too."""
    import grimp

    graph = grimp.build_graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph.find_modules_directly_imported_by(module):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycles_anywhere_in_perfview() -> None:
    """A module never imports, even lazily, something that imports it back: layers stay
    layers, and a module can be read (and tested) without its dependants."""
    assert _import_cycles("perfview") == []
