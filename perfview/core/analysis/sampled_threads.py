"""One thread of a sampled profile, or all of them: the flame graphs' thread choice.

A sampled profile with several threads (py-spy's speedscope file: one profile per thread;
Gecko threads; Austin's thread roots) is merged into one tree with one top node per thread, so
"all threads" adds their samples on one axis (a 38 s py-spy run with four threads weighs about
100 s). Picking a thread shows that thread's subtree alone, whose total is that thread's
samples × the sampling interval. The window's thread picker and `perfview summary --thread`
both go through `choices`, `resolve` and `thread_tree`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfview.core.model import Bundle, CallTree


@dataclass(frozen=True)
class ThreadChoice:
    """`thread`: the Threads table's `thread` id; None for every thread together."""

    thread: int | None
    label: str
    name: str = ""


ALL = ThreadChoice(None, "All threads")


def _thread_node(tree: CallTree, name: str) -> int:
    """The tree node standing for thread `name`: a top node of that name, or, for folded
    stacks whose thread roots are several frames (Austin's `P1155;T0:6148403200`), the path
    of those frames from the root. -1 when the tree has none."""
    names = tree.frames["name"].astype(str).to_numpy()
    parent = tree.parent.astype(np.int64)

    def child(node: int, part: str) -> int:
        kids = np.flatnonzero(parent == node)
        kids = kids[(kids > 0) & (tree.frame[kids] >= 0)]
        match = kids[names[tree.frame[kids]] == part]
        return int(match[0]) if len(match) else -1

    if (top := child(0, name)) > 0:
        return top
    node = 0
    for part in name.split(";"):
        node = child(node, part)
        if node <= 0:
            return -1
    return node


def choices(bundle: Bundle) -> list[ThreadChoice]:
    """All threads, then each thread the tree has a node for; just `[ALL]` when the profile
    has fewer than two such threads (nothing to choose)."""
    if bundle.sampled is None or bundle.tree is None:
        return [ALL]
    threads = bundle.sampled.threads
    out = [ALL]
    for thread, name, samples in zip(
        threads["thread"], threads["name"].astype(str), threads["samples"], strict=True
    ):
        if _thread_node(bundle.tree, name) > 0:
            out.append(ThreadChoice(int(thread), f"{name} ({int(samples):,} samples)", name))
    return out if len(out) > 2 else [ALL]


def resolve(bundle: Bundle, text: str) -> ThreadChoice:
    """The thread `text` names: its id in the Threads table, its whole name, or a fragment of
    one name (case-insensitive). ValueError with one sentence otherwise."""
    if bundle.sampled is None:
        raise ValueError("--thread applies to sampled profiles (py-spy, speedscope, Gecko, …)")
    listed = choices(bundle)[1:]
    wanted = text.strip()
    if not listed:  # one thread: the whole tree is that thread's
        threads = bundle.sampled.threads
        ids = [str(t) for t in threads["thread"]]
        names = threads["name"].astype(str).tolist()
        if wanted in ids or any(wanted.lower() in n.lower() for n in names):
            return ALL
        only = f"the only one is {names[0]!r}" if names else "the profile lists none"
        raise ValueError(f"--thread {text!r} names no thread; {only}")
    by_id = [c for c in listed if wanted.isdigit() and c.thread == int(wanted)]
    exact = [c for c in listed if c.name == wanted]
    fragment = [c for c in listed if wanted.lower() in c.name.lower()]
    for found in (by_id, exact, fragment):
        if len(found) == 1:
            return found[0]
    every = ", ".join(f"{c.thread}: {c.name}" for c in listed)
    how = "matches several threads" if fragment else "names no thread"
    raise ValueError(f"--thread {text!r} {how}; the threads are {every}")


def thread_tree(bundle: Bundle, choice: ThreadChoice) -> CallTree | None:
    """The tree of one thread (its node at the top, under a new root), or the merged tree."""
    from perfview.core.analysis.calltree import focus  # not at the window's start-up

    if choice.thread is None or bundle.tree is None:
        return bundle.tree
    node = _thread_node(bundle.tree, choice.name)
    if node <= 0:
        raise ValueError(f"the call tree has no node for thread {choice.name!r}")
    tree = focus(bundle.tree, node)
    # the root counts the thread's samples, as the merged tree's root counts every one
    tree.metrics["calls"][0] = bundle.tree.metrics["calls"][node]
    return tree


def with_thread(bundle: Bundle, choice: ThreadChoice) -> Bundle:
    """The same bundle with one thread's tree: what a page that honours the thread choice
    computes its table from (`Page.per_thread`)."""
    from dataclasses import replace

    if choice.thread is None:
        return bundle
    return replace(bundle, tree=thread_tree(bundle, choice))


__all__ = ["ALL", "ThreadChoice", "choices", "resolve", "thread_tree", "with_thread"]
