"""Reading the sample JSON directly, so tests compare perfview's numbers with the file's own."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

from tests.conftest import sample

GPU = "kineto_gpu/"
NCCL = GPU + "hta_nccl_data.json.gz"
RESNET_2021 = GPU + "kineto_resnet50_w0_1623143089861.pt.trace.json.gz"
RANK0 = GPU + "hta_sampled_rank-0.json.gz"
RANK1 = GPU + "hta_sampled_rank-1.json.gz"
ROCM = GPU + "hta_mi250_rocm6.2.json.gz"
CPU_MEM = "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"


@cache
def _doc(path: Path) -> dict[str, Any]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        doc = json.load(fh)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def raw(rel: str) -> dict[str, Any]:
    """The whole JSON document of a sample (skips the test when the sample is absent)."""
    return _doc(sample(rel))


def events(rel: str, cat: str | None = None, ph: str = "X") -> list[dict[str, Any]]:
    """X events of a sample, optionally of one category (compared case-insensitively)."""
    out = [e for e in raw(rel)["traceEvents"] if e.get("ph") == ph]
    if cat is not None:
        out = [e for e in out if str(e.get("cat", "")).lower() == cat.lower()]
    return out


def ns(us: float | str) -> int:
    """kineto µs (float) → ns, as the loader rounds them."""
    return round(float(us) * 1000)


@cache
def _load(path: Path) -> Any:
    from perfview.loaders import load

    return load(path)


def bundle(rel: str) -> Any:
    """The loaded Bundle of a sample, loaded once per test session (tests only read it)."""
    return _load(sample(rel))


def timeline(rel: str) -> Any:
    """The Timeline of a trace sample (see `bundle`)."""
    return bundle(rel).timeline
