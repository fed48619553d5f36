"""`perfview mcp` without the SDK: one sentence saying how to get it, exit 2, no traceback."""

from __future__ import annotations

import sys

import pytest

from perfview import cli


def test_without_the_sdk_it_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what find_spec sees when it is absent
    code = cli.main(["mcp"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.strip().splitlines() == [
        "perfview: perfview mcp needs the Model Context Protocol SDK, which is not installed: "
        "pip install 'perfview[mcp]'"
    ]


def test_mcp_is_a_headless_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert not cli.opens_window(["mcp"])
    assert cli.main(["mcp", "--help"]) == 0
    assert "usage: perfview mcp" in capsys.readouterr().out
