"""Which (kind, name) pairs occur in a trace, found in one pass: the page registry's "is there
any X?" questions (any kernel, any collective, any `nn.Module`) answered without whole-table
masks.

On every open the registry asks half a dozen of them before the first page shows. Asked as
masks (`kind_mask & name_mask`, a pandas `isin`), each read and wrote the whole events table:
on a 10 GB trace's 34 M rows they took ~0.6 s of a 1.3 s reopen. One pass over the kind and
name codes marks the pairs that occur (a table of kinds x names, one byte each); every
question after it reads that table.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.torch import remembered
from perfview.core.analysis.torch.common import COMM_KERNEL_RE, kind_mask, name_mask

COMPILED_FROM = 1_000_000  # rows; below, numpy's pass is as quick as loading numba
_PAIRS = remembered.Store()
_COMPILED: dict[str, Any] = {}


def kinds_present(events: pd.DataFrame) -> frozenset[str]:
    """The kinds that at least one row has."""
    column = events["kind"]
    if not _coded(events):
        return frozenset(str(k) for k in pd.unique(column))
    seen: np.ndarray = np.asarray(_pairs(events).any(axis=1))
    return frozenset(str(k) for k, hit in zip(column.cat.categories, seen, strict=True) if hit)


def any_named(events: pd.DataFrame, kind: str, pattern: str) -> bool:
    """Whether a row of `kind` has a name matching the regex `pattern`
    (`(kind_mask & name_mask).any()`), the names tested once each among the categories."""
    if not _coded(events):
        return bool((kind_mask(events, (kind,)) & name_mask(events, pattern)).any())
    k = pd.Index(events["kind"].cat.categories).get_indexer([kind])[0]
    if k < 0:
        return False
    row = _pairs(events)[k]
    names = pd.Series(events["name"].cat.categories.astype(str))
    return bool((row & names.str.contains(pattern, regex=True).to_numpy(dtype=bool)).any())


def has_comm_kernels(events: pd.DataFrame) -> bool:
    """Whether any GPU kernel is a collective (NCCL/RCCL, `comm_kernel_mask`)."""
    return any_named(events, "kernel", COMM_KERNEL_RE)


def _coded(events: pd.DataFrame) -> bool:
    return all(isinstance(events[c].dtype, pd.CategoricalDtype) for c in ("kind", "name"))


def _pairs(events: pd.DataFrame) -> np.ndarray:
    """seen[kind code, name code]: whether a row has that pair, made once while `events` lives."""
    table: np.ndarray = _PAIRS.while_alive(events, id(events), lambda: _mark_pairs(events))
    return table


def _mark_pairs(events: pd.DataFrame) -> np.ndarray:
    kinds = events["kind"].cat
    names = events["name"].cat
    kind_codes = kinds.codes.to_numpy()
    name_codes = names.codes.to_numpy()
    seen = np.zeros((len(kinds.categories), len(names.categories)), dtype=bool)
    if _compiled(len(kind_codes)):
        _kernel()(kind_codes, name_codes, seen)
        return seen
    both = (kind_codes >= 0) & (name_codes >= 0)
    seen[kind_codes[both], name_codes[both]] = True
    return seen


def _compiled(rows: int) -> bool:
    return rows >= COMPILED_FROM or "numba" in sys.modules


def _mark(kind_codes: np.ndarray, name_codes: np.ndarray, seen: np.ndarray) -> None:
    for i in range(len(kind_codes)):
        k = kind_codes[i]
        n = name_codes[i]
        if k >= 0 and n >= 0:
            seen[k, n] = True


def _kernel() -> Any:
    """The compiled `_mark` (numba's dispatcher; compiled or loaded from disk on first use)."""
    if not _COMPILED:
        from numba import njit

        from perfview.core import numba_registries

        numba_registries.load()
        _COMPILED["mark"] = njit(cache=True, nogil=True)(_mark)
    return _COMPILED["mark"]
