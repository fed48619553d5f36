"""Every "exact" row of docs/agreement.md is exact on the real samples, and the doc is the
script's current output (regenerate with `python3 scripts/fixtures/agreement_table.py`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT, SAMPLES

TOLERANCE = {
    "calls / ns": 0.0,
    "bytes": 0.0,
    "MiB": 1e-6,
    "relative": 1e-9,
    "µs": 0.0,
    "entries": 0.0,
}


def _script() -> ModuleType:
    if "agreement_table" in sys.modules:
        return sys.modules["agreement_table"]
    path = ROOT / "scripts" / "fixtures" / "agreement_table.py"
    spec = importlib.util.spec_from_file_location("agreement_table", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["agreement_table"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows() -> list:  # type: ignore[type-arg]
    if not SAMPLES.is_dir():
        pytest.skip(f"real samples folder {SAMPLES} is absent")
    return _script().all_rows(SAMPLES)  # type: ignore[no-any-return]


def test_exact_rows_are_exact(rows: list) -> None:  # type: ignore[type-arg]
    exact = [r for r in rows if r.exact]
    assert len(exact) >= 6
    for row in exact:
        assert row.files, row.view
        assert row.max_diff <= TOLERANCE[row.unit], (row.view, row.max_diff)


def test_rows_that_differ_say_why(rows: list) -> None:  # type: ignore[type-arg]
    for row in rows:
        if not row.exact:
            assert len(row.note) > 40, row.view


def test_doc_is_the_scripts_output(rows: list) -> None:  # type: ignore[type-arg]
    for extra in ("memray", "torch"):
        if importlib.util.find_spec(extra) is None:
            pytest.skip(f"{extra} is absent: its rows are not computed here")
    doc = Path(ROOT / "docs" / "agreement.md").read_text()
    assert doc == _script().markdown(rows)
