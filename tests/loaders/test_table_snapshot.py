"""Every summary view of every real sample, byte for byte, against a committed digest.

tests/data/table_snapshot.json holds a sha256 per (sample, view) of exactly what
`perfview summary SAMPLE --view VIEW --top 0 --format json` prints (path made relative), as
`scripts/fixtures/snapshot_tables.py` writes it. It was taken on the code before the trace loader
was restructured into `perfview.loaders.trace`, so a refactor of any loader or view that changes
one number shows here. The trace samples are checked on both decoders (the general path and
the compiled scanner forced on every file).

A deliberate change of a view's output: regenerate the digest and commit it with the change,

    python scripts/fixtures/snapshot_tables.py tests/data/table_snapshot.json --digest --no-cache

Views added later (absent from the digest) are not compared; samples absent here are skipped.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
DIGEST = ROOT / "tests" / "data" / "table_snapshot.json"
EXPECTED: dict[str, dict[str, str]] = json.loads(DIGEST.read_text())
TRACE_DIRS = ("chrome_trace/", "kineto_cpu/", "kineto_gpu/", "odd/")


def _snapshot_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "snapshot_tables", ROOT / "scripts" / "fixtures" / "snapshot_tables.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("snapshot_tables", module)
    spec.loader.exec_module(module)
    return module


def _check(label: str, compiled: bool | None) -> None:
    path = SAMPLES / label
    if not path.is_file():
        pytest.skip(f"sample {label} is absent ({SAMPLES})")
    got = _snapshot_script().digests(label, path, use_cache=False, compiled=compiled)
    want = EXPECTED[label]
    changed = sorted(name for name in want if got.get(name) != want[name])
    assert not changed, (
        f"{label}: these views changed: {changed} (see this module's docstring to regenerate)"
    )


@pytest.mark.parametrize("label", sorted(EXPECTED))
def test_views_match_the_snapshot(label: str) -> None:
    _check(label, None)  # every sample is small: the general path, as each loader chooses


@pytest.mark.parametrize("label", sorted(k for k in EXPECTED if k.startswith(TRACE_DIRS)))
def test_trace_views_match_the_snapshot_on_the_scanner(label: str) -> None:
    _check(label, True)  # the compiled scanner, where it can
