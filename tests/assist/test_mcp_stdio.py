"""`perfview mcp` as an assistant meets it: the real server started as a subprocess, spoken to
with the `mcp` SDK's own stdio client. Skips when the SDK (the 'mcp' extra) is absent."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from perfview import cli
from tests.conftest import ROOT, sample

pytest.importorskip(
    "mcp", reason="perfview mcp needs the 'mcp' extra (pip install 'perfview[mcp]')"
)
pytest.importorskip("duckdb", reason="queries need the 'query' extra (duckdb)")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

PSTATS = "pstats/hypothesis_csv_combined.prof"
TOOLS = {
    "open_profile",
    "close_profile",
    "list_views",
    "get_rows",
    "run_query",
    "get_recommendations",
    "diff_profiles",
}


async def _conversation(path: str) -> dict[str, Any]:
    """One session: every answer the test checks, in the order an assistant would ask."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "perfview", "mcp"], cwd=str(ROOT), env=dict(os.environ)
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        seen["tools"] = {t.name: t for t in (await session.list_tools()).tools}
        opened = await session.call_tool("open_profile", {"path": path})
        seen["open"] = opened.structured_content
        handle = seen["open"]["handle"]
        rows = await session.call_tool(
            "get_rows", {"handle": handle, "view": "functions", "top": 6}
        )
        seen["rows"] = rows.structured_content
        sql = "SELECT count(*) AS n, sum(ncalls) AS calls FROM functions"
        seen["query"] = (
            await session.call_tool("run_query", {"handle": handle, "sql": sql})
        ).structured_content
        for name, sql in (
            ("copy", f"COPY functions TO '{path}.csv'"),
            ("create", "CREATE TABLE t AS SELECT 1"),
            ("read", "SELECT * FROM read_csv('/etc/hostname')"),
        ):
            seen[name] = await session.call_tool("run_query", {"handle": handle, "sql": sql})
        seen["missing"] = await session.call_tool("get_rows", {"handle": "d42"})
    return seen


def test_an_assistant_reads_what_summary_prints(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(sample(PSTATS))
    seen = anyio.run(_conversation, path)

    assert set(seen["tools"]) == TOOLS
    assert all(t.annotations.read_only_hint for t in seen["tools"].values())

    assert seen["open"]["format"] == "pstats"
    assert "functions" in [v["name"] for v in seen["open"]["views"]]

    assert cli.main(["summary", path, "--view", "functions", "--top", "6", "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    rows = dict(seen["rows"])
    assert rows.pop("produced_by")["view"] == "functions"
    assert rows == expected

    query = seen["query"]
    assert query["produced_by"]["query"].startswith("SELECT count(*)")
    assert query["rows"][0]["n"] == expected["total_rows"]
    assert query["rows"][0]["calls"] > 0

    for name, why in (("copy", "COPY"), ("create", "CREATE"), ("read", "it reads a file")):
        refused = seen[name]
        assert refused.is_error
        text = refused.content[0].text
        assert "query refused: " in text
        assert why in text
        assert "\n" not in text
    assert not os.path.exists(f"{path}.csv")
    assert seen["missing"].is_error
    assert "there is no open document 'd42'" in seen["missing"].content[0].text
