"""`perfview summary` of a job, byte for byte, against digests taken before a job became a
document kind of the page registry (its views were then a `JOB_VIEWS` table of their own).

Each digest is the sha256 of `perfview summary SOURCE [--view VIEW] --top 0 --format json`'s
JSON document with `path` made relative to the samples folder (so the clone's location does not
matter), dumped with sorted keys as `scripts/snapshot_tables.py` does. The single file is asked
the cross-rank views, which open it as a one-rank job. A deliberate change of a job view's
output: print the new digests with this module's `_digest` and commit them with the change.
Changed deliberately since: the ranks and stragglers tables' `partial` column (a rank whose
file was cut short), the overlap view's `definition` sentence, and the collectives table's
at_ns (time since the job's first collective; start_ns moved last) and its definitions.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from perfview import cli
from tests.conftest import SAMPLES

FOLDER = "ranks/hta_sampled_2of128"
FILE = f"{FOLDER}/rank-0.json.gz"
EXPECTED = {
    (FOLDER, None): "2b69faff6dfc979170cdb80821fd6cdf07e0fa54e87e68c8e03dff144f270d98",
    (FOLDER, "ranks"): "2b69faff6dfc979170cdb80821fd6cdf07e0fa54e87e68c8e03dff144f270d98",
    (FOLDER, "collectives"): "66660c8718d3e4943cbdb818c7c0469ee611b78b0f690a7093876b5b4472c681",
    (FOLDER, "collective-kinds"):
        "74f8fe857779a5d6e9cb5a5d539cb66eec89cb8388a3dc05bb320e020dae82f8",
    (FOLDER, "overlap"): "8a0f7a3f8486ccb7da32ef358994cfb93705b8f9181aed1c9389dbdd01c6fe9e",
    (FOLDER, "stragglers"): "0416f93ddd45467e07c8dad9047df4cfb7fe5b213b97698bf22996b550c405bb",
    (FILE, "ranks"): "96f25c13f7b5218796d21f7adf2e075a2efff291327b11f7e1bd3d165b01889e",
    (FILE, "collectives"): "562a9759a415f94e489800ddec31c14218fb5b6c69dae136c27f4966f13bec55",
    (FILE, "collective-kinds"): "ed93e337b5658f4db8e6a43a4d80f1c1cf7b92c9f3c738b6c622a47b19b09aa9",
    (FILE, "overlap"): "4120293a818cbf5ae25639a96dde26eadc39ef1f363a9ef3a8b6af888ebf66d2",
    (FILE, "stragglers"): "ed18bfe058ca18fc9f7c42f378460027df0d33c7eceab4032319ad662d3e46b8",
}  # fmt: skip


def _digest(capsys: pytest.CaptureFixture[str], label: str, view: str | None) -> str:
    argv = ["summary", str(SAMPLES / label), "--top", "0", "--format", "json", "--workers", "1"]
    code = cli.main(argv + (["--view", view] if view else []))
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    doc["path"] = label
    text = json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=0)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(("label", "view"), list(EXPECTED))
def test_job_views_match_the_snapshot(
    capsys: pytest.CaptureFixture[str], label: str, view: str | None
) -> None:
    if not (SAMPLES / label).exists():
        pytest.skip(f"sample {label} is absent ({SAMPLES})")
    assert _digest(capsys, label, view) == EXPECTED[label, view]
