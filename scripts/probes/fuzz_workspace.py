"""Malformed `.perfview` workspaces for `fuzz_loaders.py`: a good workspace with wrong types
in every field ("tabs": 5), deep nesting, absurd time ranges ([2**70, -5]), odd versions
(1.0, "1", true), huge strings, NaN, invalid UTF-8 and truncations.

`workspace_case(rng)` gives (mutation, bytes); `read_case(path)` feeds them to the reader
(`documents.workspace.read`), as opening the file does.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

GOOD_TAB: dict[str, Any] = {
    "path": "trace.json", "view": "timeline", "x_range": [0, 1000], "time_range": [10, 20],
    "selection": 3, "bookmarks": [{"ts_ns": 5, "label": "here"}],
    "tracks": {"hidden": [1, 2], "pinned": [3], "order": [3, 1, 2], "collapsed": [],
               "flows": "all"},
}  # fmt: skip
WRONG: tuple[Any, ...] = (5, -1, 2**70, -(2**70), 1.5, 1e308, "x", "", None, True, [], {},
                          [2**70, -5], [-5, 2**70], [10, 5], [1, 2, 3], [1.5, 3], ["a", "b"],
                          {"path": 5}, "é" * 1000, "\udcff", 10**400)  # fmt: skip


def _good() -> dict[str, Any]:
    return {"format": "perfview-workspace", "version": 1, "current": 0,
            "tabs": [json.loads(json.dumps(GOOD_TAB)) for _ in range(2)]}  # fmt: skip


def _wrong(rng: random.Random) -> Any:
    """A wrong-typed value, copied: a shared list or dict put in two places could end up
    holding itself (the harness's json.dumps then failed: "Circular reference detected")."""
    return copy.deepcopy(rng.choice(WRONG))


def _wrong_types(rng: random.Random, doc: dict[str, Any]) -> None:
    for _ in range(rng.choice((1, 3, 10))):
        tabs = doc.get("tabs")
        if isinstance(tabs, list) and tabs and isinstance(tabs[0], dict) and rng.random() < 0.7:
            tab = rng.choice(tabs)
            if not isinstance(tab, dict):
                continue
            key = rng.choice([*GOOD_TAB, "tracks.hidden", "tracks.flows", "bookmarks.ts_ns"])
            if key.startswith("tracks.") and isinstance(tab.get("tracks"), dict):
                tab["tracks"][key.split(".")[1]] = _wrong(rng)
            elif key == "bookmarks.ts_ns":
                tab["bookmarks"] = [{"ts_ns": _wrong(rng), "label": _wrong(rng)}]
            else:
                tab[key] = _wrong(rng)
        else:
            doc[rng.choice(["format", "version", "current", "tabs"])] = rng.choice(
                (*WRONG, 1.0, 2, 0, "1", "perfview-workspace")
            )


def _deep(rng: random.Random, text: str) -> str:
    depth = rng.choice((100, 1000, 10_000, 100_000))
    nest = rng.choice(("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth))
    where = rng.choice(('"tabs": ', '"tracks": ', '"time_range": ', '"view": '))
    pos = text.find(where)
    if pos < 0:
        return nest
    end = pos + len(where)
    stop = end
    depth_seen = 0
    for i in range(end, len(text)):  # replace the value that follows
        c = text[i]
        depth_seen += c in "[{"
        depth_seen -= c in "]}"
        if depth_seen <= 0 and c in ",}]":
            stop = i + (c in "]}" and depth_seen == 0 and text[end] in "[{")
            break
    return text[:end] + nest + text[stop:]


def workspace_case(rng: random.Random) -> tuple[str, bytes]:
    """(mutation, bytes) of one malformed workspace."""
    doc = _good()
    kind = rng.choice(("wrong_types", "deep", "huge_string", "truncate", "bad_utf8", "nan",
                       "version", "many_tabs"))  # fmt: skip
    if kind in ("wrong_types", "deep", "truncate", "bad_utf8"):
        _wrong_types(rng, doc) if kind == "wrong_types" else None
    elif kind == "huge_string":
        doc["tabs"][0][rng.choice(("path", "view"))] = "x" * rng.choice((10**5, 10**7))
    elif kind == "version":
        doc["version"] = rng.choice((1.0, 1.5, "1", True, 2**70, -1, 0, 2, None, [1]))
    elif kind == "many_tabs":
        doc["tabs"] = [GOOD_TAB] * rng.choice((1000, 100_000))
    text = json.dumps(doc, ensure_ascii=False, allow_nan=True)
    if kind == "nan":
        text = text.replace("[10, 20]", rng.choice(("[NaN, 20]", "[Infinity, -Infinity]",
                                                     "[1e400, 2]", "[-0, 1e-400]")))  # fmt: skip
    if kind == "deep":
        text = _deep(rng, text)
    data = text.encode("utf-8", "surrogatepass")
    if kind == "truncate":
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == "bad_utf8":
        pos = rng.randrange(len(data) + 1)
        data = data[:pos] + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80")) + data[pos:]
    return kind, data


def read_case(path: Path) -> Any:
    """Open the workspace file as the window does."""
    from perfview.documents import workspace

    return workspace.read(path)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="print this case's mutation")
    args = parser.parse_args(argv)
    mutation, data = workspace_case(random.Random(args.seed))
    print(f"{mutation}: {len(data):,} bytes; run by fuzz_loaders.py --loader workspace")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
