"""Search in names and args (core/search.py) on real traces and on hand-made args."""

from __future__ import annotations

import json

import numpy as np
import pytest

from perfview.core.analysis.search import Query, SearchError, parse_query, search_rows
from perfview.core.layout.timeline_layout import prepare_timeline
from perfview.core.model import ArgsStore
from perfview.loaders import load
from tests.conftest import sample

CPU = "kineto_cpu/dtu_gabriellanaro_cpu_mem_trace.json"


def _store(docs: list[str]) -> ArgsStore:
    blob = "".join(docs).encode()
    offsets = np.cumsum([0, *[len(d.encode()) for d in docs]])
    return ArgsStore.from_offsets(blob, offsets)


def test_parse_query_forms() -> None:
    assert parse_query("  mm ") == Query("text", "mm")
    assert parse_query("/^aten::(mm|bmm)$/") == Query("regex", "^aten::(mm|bmm)$")
    assert parse_query("Input Dims = [[2, 3]]") == Query("arg", key="Input Dims", value="[[2, 3]]")
    assert parse_query("stream=") == Query("arg", key="stream", value="")
    assert parse_query("a == b").kind == "arg"


def test_text_regex_and_key_value_on_hand_made_args() -> None:
    docs = ['{"stream": 7, "grid": [1, 2]}', '{"stream": 70}', "", '{"note": "Stream=7 text"}']
    args = _store(docs)
    names = np.array(["kernelA", "memcpy", "streamer", "other"], dtype=object)
    codes = np.arange(4)
    assert search_rows("stream=7", names, codes, args).tolist() == [0]
    assert search_rows("stream=", names, codes, args).tolist() == [0, 1]
    assert search_rows("grid=[1,2]", names, codes, args).tolist() == [0]
    assert search_rows("grid=[1, 3]", names, codes, args).tolist() == []
    # text: names or args text, case-insensitive
    assert search_rows("stream", names, codes, args).tolist() == [0, 1, 2, 3]
    assert search_rows("KERNEL", names, codes, args).tolist() == [0]
    assert search_rows("/^mem|other$/", names, codes, args).tolist() == [1, 3]
    assert search_rows('/"stream": 7\\d/', names, codes, args).tolist() == [1]
    # a match must lie inside one slice's args, not across two
    assert search_rows("}{", names, codes, args).tolist() == []
    with pytest.raises(SearchError, match="regular expression"):
        search_rows("/[/", names, codes, args)


def test_search_on_a_real_trace_agrees_with_decoding_every_slice() -> None:
    tl = load(sample(CPU)).timeline
    assert tl is not None
    data = prepare_timeline(tl)
    decoded = [tl.args.get(i) for i in range(len(tl.events))]
    dims = [[5, 128, 28, 28], [128], [128], [128], [128], [], [], [], []]
    want = [i for i, a in enumerate(decoded) if a.get("Input Dims") == dims]
    got = search_rows(f"Input Dims={dims}", data.categories, data.codes, tl.args)
    assert got.tolist() == want
    assert len(want) > 0
    want_ext = [i for i, a in enumerate(decoded) if a.get("External id") == 12]
    assert search_rows("external id=12", data.categories, data.codes, tl.args).tolist() == (
        want_ext
    )
    names = tl.events["name"].astype(str).to_numpy()
    in_name = {i for i, n in enumerate(names) if "conv" in n.lower()}
    in_args = {i for i, a in enumerate(decoded) if "conv" in json.dumps(a).lower()}
    rows = search_rows("conv", data.categories, data.codes, tl.args, data.ts)
    assert set(rows.tolist()) == in_name | in_args
    assert (np.diff(data.ts[rows]) >= 0).all()  # time order


def test_chunked_scan_finds_matches_across_chunk_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    from perfview.core.analysis import search

    tl = load(sample(CPU)).timeline
    assert tl is not None
    data = prepare_timeline(tl)
    queries = ["Conv", "External id=12", "sequence number=5", "/INPUT DIMS/"]
    whole = [search_rows(q, data.categories, data.codes, tl.args).tolist() for q in queries]
    monkeypatch.setattr(search, "CHUNK", 97)  # hundreds of chunk edges inside the args
    monkeypatch.setattr(search, "OVERLAP", 64)
    chunked = [search_rows(q, data.categories, data.codes, tl.args).tolist() for q in queries]
    assert chunked == whole
    assert all(whole)
