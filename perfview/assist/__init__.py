"""What an AI assistant may ask of perfview (`perfview mcp`), Qt-free and written nothing.

- `handles.py`: the documents an assistant opened (a file, or a folder of rank traces), each
  under a short handle, at most `MAX_OPEN` at once;
- `answers.py`: the answers — views, a view's rows, a read-only SQL query, the
  recommendations with their evidence, a diff of two documents — each a JSON-ready dict
  naming the view or query (and the `perfview` command) that produced it, so a claim can be
  checked; failures are `AssistError`, one sentence;
- `server.py`: the Model Context Protocol server over stdio (the `mcp` SDK, an extra), one
  tool per answer. Only this module imports the SDK.
"""

from __future__ import annotations

from perfview.assist.answers import Assistant
from perfview.assist.handles import MAX_OPEN, AssistError

__all__ = ["MAX_OPEN", "AssistError", "Assistant"]
