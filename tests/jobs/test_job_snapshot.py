"""`perfview summary` of a job, byte for byte, against digests taken before a job became a
document kind of the page registry (its views were then a `JOB_VIEWS` table of their own).

Each digest is the sha256 of `perfview summary SOURCE [--view VIEW] --top 0 --format json`'s
JSON document with `path` made relative to the samples folder (so the clone's location does not
matter), dumped with sorted keys as `scripts/snapshot_tables.py` does. The single file is asked
the cross-rank views, which open it as a one-rank job. A deliberate change of a job view's
output: print the new digests with this module's `_digest` and commit them with the change.
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
    (FOLDER, None): "f64fc2c46f13004ad2454e2009815e2f8088c38f8c3378f578ef82a4762007f3",
    (FOLDER, "ranks"): "f64fc2c46f13004ad2454e2009815e2f8088c38f8c3378f578ef82a4762007f3",
    (FOLDER, "collectives"): "b2def02a3a7ae3675dd8587332ff0afc2d268f32668779d79e39d4188840a3da",
    (FOLDER, "collective-kinds"):
        "74f8fe857779a5d6e9cb5a5d539cb66eec89cb8388a3dc05bb320e020dae82f8",
    (FOLDER, "overlap"): "6a1ef182b92be73d73afa8952f81375ce2daed89bcb1dfa613bc4960d780f4f3",
    (FOLDER, "stragglers"): "e8d1bde2b11052d77669dfa00a16c7245b1a6c3892952f78e6cfaa4b63e7ced1",
    (FILE, "ranks"): "96f25c13f7b5218796d21f7adf2e075a2efff291327b11f7e1bd3d165b01889e",
    (FILE, "collectives"): "e6240aff7a7b83ea5095e49950e515fc0b043b7cf8fdae60c7fe0c452fd28bfa",
    (FILE, "collective-kinds"): "ed93e337b5658f4db8e6a43a4d80f1c1cf7b92c9f3c738b6c622a47b19b09aa9",
    (FILE, "overlap"): "1bb5840f453a9a842d79d8025d6145c077a5e5ddbf597d3db33cb26ef3efb4da",
    (FILE, "stragglers"): "0df1ab6a3d5b6965e7886a88b9e33a6fc6c23904017e6c5eeed309a2d9025b34",
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
