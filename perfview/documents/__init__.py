"""The owner of an open document (Qt-free): opens a path with the load service, then plans
and prepares its pages off the GUI thread. The window's load task and every CLI command
(`summary`, `diff`, `query`, `export`) open documents here.

- `document.py`: `open_document(path, progress, OpenOptions)` → `OpenDocument` (the bundle, the
  tables and page data prepared so far, the gate its store entries wait on);
- `plan.py`: which pages to prepare first, from the page registry's page properties;
- `prepare.py`: a page's data, from the store (`perfview.store`) or computed;
- `ahead.py`: the pages a document is opened for, laid out on threads of their own.
"""

from __future__ import annotations

from perfview.documents.document import (
    WRITE_GATE_CAP_S,
    OpenDocument,
    OpenOptions,
    open_document,
    prepare_pages,
)

__all__ = ["WRITE_GATE_CAP_S", "OpenDocument", "OpenOptions", "open_document", "prepare_pages"]
