"""Steps several pages share are computed once per timeline, and the faster text and device
labels give what the slower ones gave (issue 37: a page clicked after the load paid again
for what the page before had computed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from perfview.core.analysis.torch import common, kernels, memory_alloc, op_kernels
from perfview.core.pages.data import KernelsData, OpsData
from perfview.loaders import load
from tests.conftest import sample

RESNET = "kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"


def _slow_text(values: Any) -> np.ndarray:
    """The conversion `text` made before: every value through pandas' str."""
    return np.asarray(pd.Series(values).astype(object).astype(str).to_numpy(), dtype=object)


@pytest.mark.parametrize(
    "values",
    [
        pd.Categorical(["a", None, "b", "a"]),
        pd.Series(["x", "y", "x"], dtype="category"),
        pd.Categorical([None, None], categories=["z"]),
        np.array(["a", None, 1, 2.5], dtype=object),
        np.array(["only", "text"], dtype=object),
        np.array([], dtype=object),
        np.array([1, 2]),
        pd.Series(["a", np.nan]),
    ],
)
def test_text_gives_what_the_str_conversion_gave(values: Any) -> None:
    got, want = common.text(values), _slow_text(values)
    assert got.dtype == object
    assert [None if v != v else v for v in got] == [None if v != v else v for v in want]


def test_device_labels_name_every_pair() -> None:
    kinds = np.array([1, 0, 1, 6, 99, 1])
    ids = np.array([0, -1, 1, 2, -1, 0])
    labels = memory_alloc.device_labels(kinds, ids).tolist()
    assert labels == ["cuda:0", "cpu", "cuda:1", "hip:2", "device99", "cuda:0"]
    assert memory_alloc.device_labels(np.zeros(0), np.zeros(0)).tolist() == []


def test_the_operators_and_kernels_pages_decode_the_kernels_args_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Kernels table, the Kernels page and the Operators page start from the same links
    and launch rows: decoded and linked once for the document, whichever page comes first."""
    timeline = load(sample(RESNET)).timeline
    assert timeline is not None
    decoded: list[int] = []
    decode = common.decode_args
    monkeypatch.setattr(kernels, "decode_args", lambda *a: decoded.append(1) or decode(*a))
    table = kernels.kernels_table(timeline)
    data = KernelsData.compute(timeline, table)
    ops = OpsData.compute(timeline)
    assert decoded == [1]
    assert len(data.rows) == int((timeline.events["kind"] == "kernel").sum())
    assert ops.busiest is not None
    assert list(ops.kernel_columns.columns) == list(data.op_kernels.columns.drop("op"))
    # what each got is what a fresh computation gives
    pd.testing.assert_frame_equal(data.op_kernels, op_kernels.op_kernels_table(timeline))
    fresh = load(sample(RESNET)).timeline
    pd.testing.assert_frame_equal(table, kernels.kernels_table(fresh))
