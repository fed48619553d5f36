"""The icicle tree of a bundle: the loader's, else built once from its timeline or pstats.

Its own module because it picks between builders that themselves build on `calltree`
(`trace_tree` for traces, `pstats_graph` for cProfile), so `calltree` never imports them back.
"""

from __future__ import annotations

from perfview.core.analysis.pstats_graph import build_pstats_tree
from perfview.core.analysis.trace_tree import trace_tree
from perfview.core.model import Bundle, CallTree


def tree_for(bundle: Bundle) -> CallTree | None:
    """The bundle's icicle tree: the loader's, else built (and cached on the bundle).

    Traces get `trace_tree` with its default lanes (all CPU threads, one top node per thread,
    no synthetic spans); pstats files the estimated tree, whose notes join the load warnings.
    """
    if bundle.tree is None:
        if bundle.timeline is not None and len(bundle.timeline.events):
            bundle.tree = trace_tree(bundle.timeline)
        elif bundle.profile is not None:
            bundle.tree, notes = build_pstats_tree(bundle.profile)
            bundle.warnings.extend(notes)
    return bundle.tree


__all__ = ["tree_for"]
