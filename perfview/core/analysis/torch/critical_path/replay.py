"""The critical path's compiled loops, imported on first use (`replay_kernels`, numba).

The page registry imports the critical-path pages, and the window imports the registry while it
starts: importing numba there cost every start ~0.3 s (measured: window built 0.45 → 0.60 s)
before anyone asked for a critical path. These wrappers import the kernels when one is called.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np


def _kernels() -> ModuleType:
    from perfview.core.analysis.torch.critical_path import replay_kernels

    return replay_kernels


def topological_order(n: int, src: np.ndarray, dst: np.ndarray, time: np.ndarray) -> np.ndarray:
    """Kahn's order of the graph's n nodes (`replay_kernels.topological_order`)."""
    out: np.ndarray = _kernels().topological_order(n, src, dst, time)
    return out


def incoming(n: int, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's incoming edges as (offsets, edges) (`replay_kernels.incoming`)."""
    out: tuple[np.ndarray, np.ndarray] = _kernels().incoming(n, dst)
    return out


def replay(
    order: np.ndarray,
    in_ptr: np.ndarray,
    in_edge: np.ndarray,
    src: np.ndarray,
    weight: np.ndarray,
    root_time: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(time, via): each node's latest arrival (`replay_kernels.replay`)."""
    out: tuple[np.ndarray, np.ndarray] = _kernels().replay(
        order, in_ptr, in_edge, src, weight, root_time
    )
    return out


def replay_fixed(
    order: np.ndarray,
    in_ptr: np.ndarray,
    in_edge: np.ndarray,
    src: np.ndarray,
    weight: np.ndarray,
    root_time: float,
    fixed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """`replay` with the nodes whose `fixed` time is not NaN kept at it (`replay_kernels`)."""
    out: tuple[np.ndarray, np.ndarray] = _kernels().replay_fixed(
        order, in_ptr, in_edge, src, weight, root_time, fixed
    )
    return out


def walk_sparse(
    nodes: np.ndarray, src: np.ndarray, t: np.ndarray, end: int, start: float
) -> np.ndarray:
    """The path's positions in `nodes`, latest first (`replay_kernels.walk_sparse`)."""
    out: np.ndarray = _kernels().walk_sparse(nodes, src, t, end, start)
    return out


def walk_back(
    via: np.ndarray, src: np.ndarray, t: np.ndarray, end: int, start: float
) -> np.ndarray:
    """The path's edges ending at node `end`, latest first (`replay_kernels.walk_back`)."""
    out: np.ndarray = _kernels().walk_back(via, src, t, end, start)
    return out


__all__ = [
    "incoming", "replay", "replay_fixed", "topological_order", "walk_back", "walk_sparse",
]  # fmt: skip
