"""Which accelerator backend a kineto trace comes from: CUDA, ROCm, XPU, MTIA, HPU, PrivateUse1.

kineto writes the same Chrome-trace shape for every backend; what differs is the activity
categories (its ActivityType names: `cuda_runtime`, `xpu_runtime`, `mtia_runtime`,
`mtia_ccp_events`, `hpu_op`, `privateuse1_runtime`, …), the runtime call names (ROCm records
`hipLaunchKernel` under `cuda_runtime`) and the `deviceProperties` names. The loader already
files every backend's device activity under the kinds `kernel`/`memcpy`/`memset` and its device
lanes under `gpu:N`; this module only names the backend so views say "MTIA 0", not "GPU: none".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.torch.common import device_properties
from perfview.core.model import Timeline

BACKENDS = ("CUDA", "ROCm", "XPU", "MTIA", "HPU", "PrivateUse1")

# Category prefix → backend, checked in this order (a trace names one backend).
_BY_CATEGORY = (
    ("mtia_", "MTIA"),
    ("hpu_", "HPU"),
    ("xpu_", "XPU"),
    ("privateuse1_", "PrivateUse1"),
)
_ROCM_META = ("hip_runtime_version", "hip_driver_version", "roctracer_version")
_ROCM_NAMES = ("amd", "radeon", "instinct")
_XPU_NAMES = ("intel",)
_DEVICE_KINDS = ("kernel", "memcpy", "memset")


def _categories(timeline: Timeline) -> set[str]:
    cat = timeline.events["cat"]
    values = cat.cat.categories if isinstance(cat.dtype, pd.CategoricalDtype) else cat.unique()
    return {str(v).lower() for v in values}


def _runtime_is_hip(timeline: Timeline) -> bool:
    """True when a runtime call's name starts with "hip". Looks at each distinct name once:
    turning every runtime event's name into a string held the GIL ~0.35 s at 1 GB, which
    froze the window while its Overview was prepared."""
    ev = timeline.events
    names = ev.loc[ev["kind"] == "runtime", "name"]
    if not len(names):
        return False
    if isinstance(names.dtype, pd.CategoricalDtype):
        codes = np.unique(names.cat.codes.to_numpy())
        values = list(names.cat.categories[codes[codes >= 0]]) + (["nan"] if codes[0] < 0 else [])
    else:
        values = list(names.unique())
    return any(str(v).startswith("hip") for v in values)


def backend(timeline: Timeline) -> str | None:
    """The accelerator backend (one of BACKENDS, or "GPU" when unknown); None: CPU only."""
    cats = _categories(timeline)
    for prefix, name in _BY_CATEGORY:
        if any(c.startswith(prefix) for c in cats):
            return name
    names = " ".join(str(p.get("name", "")).lower() for p in device_properties(timeline))
    if any(k in timeline.meta for k in _ROCM_META) or any(n in names for n in _ROCM_NAMES):
        return "ROCm"
    if any(n in names for n in _XPU_NAMES):
        return "XPU"
    if _runtime_is_hip(timeline):
        return "ROCm"
    if {"cuda_runtime", "cuda_driver"} & cats or "nvidia" in names:
        return "CUDA"
    has_device = bool(timeline.events["kind"].isin(_DEVICE_KINDS).any())
    return "GPU" if has_device or names else None


def device_label(name: str | None) -> str:
    """What one device of this backend is called in titles: "GPU" for CUDA/ROCm."""
    return "GPU" if name in (None, "CUDA", "ROCm", "GPU") else name


__all__ = ["BACKENDS", "backend", "device_label"]
