"""The page registry's "is there any X?" questions answered from counts, not whole-table masks:
the same answers as the masks they replace, on real traces with and without the thing."""

from __future__ import annotations

import pytest

from perfview.core.analysis.torch import modules, presence, remembered
from perfview.core.analysis.torch.common import comm_kernel_mask, name_mask
from perfview.core.analysis.torch.presence import has_comm_kernels, kinds_present
from tests.core.analysis.torch._raw import CPU_MEM, NCCL, RANK0, RESNET_2021, ROCM, timeline


@pytest.mark.parametrize("compiled", [True, False])  # numba's pass and numpy's
@pytest.mark.parametrize("rel", [NCCL, RESNET_2021, RANK0, ROCM, CPU_MEM])
def test_presence_agrees_with_the_masks(
    rel: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(presence, "_compiled", lambda _rows: compiled)
    monkeypatch.setattr(presence, "_PAIRS", remembered.Store())  # made anew by each pass
    tl = timeline(rel)
    events = tl.events
    assert kinds_present(events) == {str(k) for k in events["kind"].unique()}
    assert has_comm_kernels(events) == bool(comm_kernel_mask(events).any())
    assert modules.has_modules(tl) == bool(len(modules.module_rows(tl)))


def test_a_trace_with_collectives_and_one_without() -> None:
    assert has_comm_kernels(timeline(NCCL).events)
    assert not has_comm_kernels(timeline(CPU_MEM).events)
    assert "kernel" not in kinds_present(timeline(CPU_MEM).events)


def test_a_name_mask_gives_rows_without_a_name_false() -> None:
    events = timeline(NCCL).events.copy()
    names = events["name"].cat.add_categories([]).copy()
    names.iloc[0] = None  # code -1: reads the appended False, not the last category
    events["name"] = names
    mask = name_mask(events, r".")
    assert not mask[0]
    assert mask[1:].all()
