"""The 2021 kineto schema (capitalised cats, "external id") gives the same pages as new files."""

from __future__ import annotations

import pytest

from perfview.core.pages import summary
from tests.core.analysis.torch._raw import NCCL, RANK0, RESNET_2021, bundle

PAGES = ["overview", "steps", "utilization", "operators", "op-kernels", "kernels", "ranks",
         "recommendations"]  # fmt: skip


@pytest.mark.parametrize("rel", [RESNET_2021, NCCL, RANK0])
def test_every_torch_page_has_rows(rel: str) -> None:
    b = bundle(rel)
    available = summary.available_views(b)
    for page in PAGES:
        assert page in available, page
        assert len(summary.summarize(b, page)) > 0, page


def test_2021_pages_carry_device_time_and_memory() -> None:
    b = bundle(RESNET_2021)
    ops = summary.summarize(b, "operators")
    assert ops["device_self_ns"].sum() > 0
    kernels = summary.summarize(b, "kernels")
    assert kernels["grid"].ne("").all()
    assert kernels["op"].ne("").all()
    assert {"memory", "allocations"} <= set(summary.available_views(b))
    assert summary.summarize(b, "memory")["peak_allocated_bytes"].max() > 2**30
    overview = summary.summarize(b, "overview")
    assert "Tesla V100-DGXS-32GB" in overview["value"].tolist()
