"""Profiles from tools perfview does not read, named in the refusal.

A JSON file perfview cannot place used to get the generic "not a format perfview reads",
which leaves a user wondering whether the file is damaged. Some tools' JSON is easy to
recognise by its keys; then the refusal says which tool wrote it and where its own viewer is.
Only the file's first bytes are looked at (the registry's head), never the whole file.
"""

from __future__ import annotations

import re

_TRACE = re.compile(rb'"(?:traceEvents|ph)"\s*:')
# (what the file is, its keys in the head, the tool's own viewer)
_TOOLS: tuple[tuple[str, tuple[re.Pattern[bytes], ...], str], ...] = (
    (
        "a rocprofv3 (ROCm rocprofiler-sdk) JSON result",
        (re.compile(rb'"rocprofiler-sdk-tool"\s*:'),),
        "ask rocprofv3 for Perfetto output (--output-format pftrace) and open that in Perfetto",
    ),
)


def name_tool(head: bytes) -> str | None:
    """One sentence naming the tool that wrote `head`'s JSON, or None when it is not known."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith((b"{", b"[")) or _TRACE.search(text):
        return None  # a trace's args may hold any key: never second-guess a trace
    for what, keys, viewer in _TOOLS:
        if all(key.search(text) for key in keys):
            return f"it is {what}, which perfview does not read; {viewer}"
    return None


__all__ = ["name_tool"]
