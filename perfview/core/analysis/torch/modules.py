"""Module view: time per nn.Module, forward and backward (the TensorBoard plugin's Module view).

torch.profiler records each nn.Module call as a python_function slice named
`nn.Module: <Class>_<n>` when Python stacks are on (with_stack=True / with_modules=True). A
module's path is its chain of enclosing module slices ("Sequential_0/Linear_1"); its forward
time is the duration of its slices. Backward time is found the way autograd links the passes:
every operator run in forward carries a "Sequence number", and the backward node it created
(`autograd::engine::evaluate_function: AddmmBackward0`) carries the same one; that backward
slice's time goes to the innermost module whose forward ran the operator. Both times are
inclusive: a module's figures contain its children's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfview.core.analysis.aggregate import nearest_ancestor
from perfview.core.analysis.torch import presence
from perfview.core.analysis.torch.common import (
    I64,
    decode_args,
    kind_mask,
    name_mask,
    names_at,
    text,
)
from perfview.core.model import Timeline

MODULE_PREFIX = "nn.Module: "
MODULE_NAME_RE = "^nn\\.Module: "
BACKWARD_PREFIX = "autograd::engine::evaluate_function: "
SEQ = "Sequence number"


def module_rows(tl: Timeline) -> np.ndarray:
    """Rows of the `nn.Module: …` python slices."""
    ev = tl.events
    return np.flatnonzero(kind_mask(ev, ("python",)) & name_mask(ev, MODULE_NAME_RE))


def has_modules(tl: Timeline) -> bool:
    return presence.any_named(tl.events, "python", MODULE_NAME_RE)


def _paths(tl: Timeline, mod: np.ndarray) -> np.ndarray:
    """Path of every event row's innermost module (object array; "" outside any module)."""
    ev = tl.events
    n = len(ev)
    is_mod = np.zeros(n, dtype=bool)
    is_mod[mod] = True
    short = np.full(n, "", dtype=object)
    short[mod] = [s[len(MODULE_PREFIX) :] for s in text(names_at(ev, mod))]
    up = nearest_ancestor(ev["parent"].to_numpy(dtype=I64), is_mod)
    path = np.full(n, "", dtype=object)
    # modules nest a few levels deep: build each path from its parent's, outermost first
    depth = np.zeros(n, dtype=I64)
    cur = up[mod]
    while (cur >= 0).any():
        depth[mod[cur >= 0]] += 1
        cur = np.where(cur >= 0, up[np.clip(cur, 0, None)], -1)
    for level in range(int(depth[mod].max()) + 1 if len(mod) else 0):
        at = mod[depth[mod] == level]
        parent_path = np.where(up[at] >= 0, path[np.clip(up[at], 0, None)], "")
        path[at] = [f"{p}/{s}" if p else s for p, s in zip(parent_path, short[at], strict=True)]
    inner = np.where(is_mod, np.arange(n), up)  # a module row is its own innermost module
    return np.asarray(np.where(inner >= 0, path[np.clip(inner, 0, None)], ""), dtype=object)


def _backward_by_path(tl: Timeline, path: np.ndarray) -> pd.Series:
    """Backward time per innermost module path (exclusive of other modules)."""
    ev = tl.events
    op = kind_mask(ev, ("cpu_op",))
    bwd = np.flatnonzero(op & name_mask(ev, "^" + BACKWARD_PREFIX.replace(":", "\\:")))
    fwd = np.flatnonzero(op & (path != "") & ~np.isin(np.arange(len(ev)), bwd))
    if not len(bwd) or not len(fwd):
        return pd.Series(dtype=np.int64)
    fseq = pd.Series(decode_args(tl, fwd, (SEQ,))[SEQ], dtype=object)
    ok = fseq.map(lambda v: isinstance(v, int) and v >= 0).to_numpy(dtype=bool)
    # ops nested in one call share a sequence number only with their own module: keep the first
    owner = pd.Series(path[fwd][ok], index=fseq[ok].astype(np.int64).to_numpy())
    owner = owner[~owner.index.duplicated(keep="first")]
    bseq = pd.Series(decode_args(tl, bwd, (SEQ,))[SEQ], dtype=object)
    bok = bseq.map(lambda v: isinstance(v, int) and v >= 0).to_numpy(dtype=bool)
    where = owner.reindex(bseq[bok].astype(np.int64).to_numpy()).to_numpy()
    dur = ev["dur"].to_numpy(dtype=I64)[bwd][bok]
    found = pd.notna(where)
    return pd.Series(dur[found], index=where[found]).groupby(level=0).sum()


def modules_table(tl: Timeline) -> pd.DataFrame:
    """module (path), type (class), depth, calls, forward_ns, backward_ns, total_ns.

    Sorted by path, so a module is followed by its children; see the module docstring for how
    backward time is attributed. Empty when the trace has no nn.Module slices.
    """
    cols = ["module", "type", "depth", "calls", "forward_ns", "backward_ns", "total_ns"]
    mod = module_rows(tl)
    if not len(mod):
        return pd.DataFrame(columns=cols)
    path = _paths(tl, mod)
    dur = tl.events["dur"].to_numpy(dtype=I64)
    fwd = pd.DataFrame({"module": path[mod], "dur": dur[mod]}).groupby("module")["dur"]
    out = pd.DataFrame({"calls": fwd.size(), "forward_ns": fwd.sum()})
    own_bwd = _backward_by_path(tl, path)
    modules = out.index.to_numpy(dtype=object)
    bwd = np.zeros(len(modules), dtype=I64)
    for p, t in own_bwd.items():  # inclusive: each backward slice counts for every ancestor
        parts = str(p).split("/")
        for i in range(1, len(parts) + 1):
            bwd[modules == "/".join(parts[:i])] += int(t)
    out["backward_ns"] = bwd
    out = out.reset_index()
    out["type"] = [m.rsplit("/", 1)[-1].rsplit("_", 1)[0] for m in out["module"]]
    out["depth"] = [m.count("/") for m in out["module"]]
    out["total_ns"] = out["forward_ns"] + out["backward_ns"]
    out = out.sort_values("module", kind="stable").reset_index(drop=True)
    return out[cols].astype({"depth": "int64", "calls": "int64", "forward_ns": "int64",
                             "backward_ns": "int64", "total_ns": "int64"})  # fmt: skip


__all__ = ["has_modules", "module_rows", "modules_table"]
