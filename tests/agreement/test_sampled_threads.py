"""The Threads table of a sampled profile gives each thread's weight in the unit it names.

py-spy's speedscope file weighs samples in seconds; the table printed the nanoseconds perfview
keeps internally (31,860,000,000) beside "unit: seconds". Figures here are summed from the
JSON itself.
"""

from __future__ import annotations

import json

import pytest

from perfview.core.analysis import sampled
from perfview.loaders import load
from tests.conftest import sample

PYSPY = "speedscope/pyspy_cs336_multithread.speedscope.json"
AUSTIN = "speedscope/austin2speedscope_austin-python.json"


@pytest.mark.parametrize("rel", [PYSPY, AUSTIN])
def test_thread_weight_is_in_the_unit_it_names(rel: str) -> None:
    path = sample(rel)
    doc = json.loads(path.read_text())
    table = sampled.threads_table(sampled.sampled(load(path)))
    scale = {"seconds": 1e9, "milliseconds": 1e6, "microseconds": 1e3, "nanoseconds": 1.0}
    for prof, row in zip(doc["profiles"], table.itertuples(), strict=True):
        stated = sum(prof["weights"])
        assert row.unit == prof["unit"]
        assert row.weight == pytest.approx(stated, rel=1e-9)
        assert row.weight_ns == pytest.approx(stated * scale[prof["unit"]], rel=1e-9)


def test_cli_threads_view_prints_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    from perfview.cli import main

    assert main(["summary", str(sample(PYSPY)), "--view", "threads"]) == 0
    out = capsys.readouterr().out
    assert "31,860,000,000" not in out
    assert "31.9 s" in out
