"""The assistant's answers: JSON-ready dicts, each naming what produced it.

Every answer that carries numbers says where they came from in `produced_by`: the view (a
page of the registry, `perfview.core.pages`) or the SQL query, and the `perfview` command
that prints the same rows, so the user can check a claim in a terminal or in the window.
The rows are `perfview summary --format json`'s rows — the same writer (`cli_common`)
over the same tables (`cli_common.view_table`) — so there is one set of numbers, not two.

Bounded work per call: at most `MAX_ROWS` rows in an answer, a query stopped after
`QUERY_TIMEOUT_S` and cut at `MAX_ROWS` inside DuckDB. Nothing is written: queries are one
SELECT over the document's tables (`query.read_only_refusal` and the session's sandbox).
"""

from __future__ import annotations

import io
import json
import shlex
import threading
from typing import Any

import pandas as pd

from perfview import cli_common, job_cli, query_cli
from perfview.assist.handles import AssistError, Handles, Opened
from perfview.compare_cli import write_comparison
from perfview.core.analysis import query
from perfview.core.analysis.torch import recommend
from perfview.core.compare.diff import diff_profiles
from perfview.core.model import Bundle
from perfview.core.model.errors import LoadError
from perfview.core.pages import summary

MAX_ROWS = 500  # rows in one answer: an assistant reads them all, and pays for each
DEFAULT_TOP = 20
QUERY_TIMEOUT_S = 20.0
EVIDENCE_IDS = 20  # slice ids listed per finding (the count is always given)
RECOMMENDATIONS = "recommendations"


def _bounded(top: int) -> int:
    """`top` rows, 0 meaning as many as an answer holds."""
    if top < 0:
        raise AssistError("top must be 0 (as many as allowed) or more")
    return MAX_ROWS if top == 0 else min(top, MAX_ROWS)


def _command(*words: str) -> str:
    return shlex.join(["perfview", *words])


def _summary_doc(
    bundle: Bundle, view: str, table: pd.DataFrame, total: int, extra: dict[str, Any]
) -> dict[str, Any]:
    """`perfview summary --format json`'s document, written by its own writer."""
    out = io.StringIO()
    cli_common.write_summary(bundle, view, table, 0, "json", out, total_rows=total, extra=extra)
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def _filtered(table: pd.DataFrame, contains: str | None, sort_by: str | None) -> pd.DataFrame:
    """Rows with `contains` (case-insensitive) in a text column, sorted by `sort_by` (largest
    first): the two filters every view's table takes alike."""
    if contains:
        text = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
        hit = pd.Series(False, index=table.index)
        for col in text:
            cells = table[col].astype(str)
            hit |= cells.str.contains(contains, case=False, regex=False)
        table = table[hit]
    if sort_by:
        if sort_by not in table.columns:
            cols = ", ".join(map(str, table.columns))
            raise AssistError(f"the view has no column {sort_by!r} (its columns: {cols})")
        table = table.sort_values(sort_by, ascending=False, kind="stable")
    return table


class Assistant:
    """The answers over the documents an assistant opened (`Handles`)."""

    def __init__(self, query_timeout_s: float = QUERY_TIMEOUT_S) -> None:
        self.handles = Handles()
        self.query_timeout_s = query_timeout_s

    # ------------------------------------------------------------------------ documents

    def open(self, path: str) -> dict[str, Any]:
        """Open a file or a folder of rank traces; its handle, what it is and its views."""
        return self.describe(self.handles.open(path))

    def close(self, handle: str) -> dict[str, Any]:
        self.handles.close(handle)
        return {"closed": handle, "open": self.handles.listing()}

    def describe(self, opened: Opened) -> dict[str, Any]:
        bundle = opened.bundle
        return {
            "handle": opened.handle,
            "path": opened.source,
            "format": bundle.format,
            "what": summary.FORMAT_PHRASES.get(bundle.format, bundle.format),
            "counts": {str(k): int(v) for k, v in bundle.counts.items()},
            "duration_ns": int(bundle.duration_ns),
            "warnings": [str(w) for w in bundle.warnings],
            "default_view": summary.default_view(bundle),
            "views": self.views(opened.handle)["views"],
            "query_tables": query.table_names(bundle),
        }

    def views(self, handle: str) -> dict[str, Any]:
        """The views with data for this document, in the page registry's order."""
        bundle = self.handles.get(handle).bundle
        views = summary.VIEWS
        rows = [
            {"name": n, "title": views[n].title, "description": views[n].description}
            for n in summary.available_views(bundle)
        ]
        return {"handle": handle, "views": rows}

    # ----------------------------------------------------------------------------- rows

    def rows(
        self,
        handle: str,
        view: str | None = None,
        top: int = DEFAULT_TOP,
        contains: str | None = None,
        sort_by: str | None = None,
        edits: list[str] | None = None,
    ) -> dict[str, Any]:
        """A view's rows as `perfview summary --format json` prints them, optionally only
        those containing `contains` and sorted by `sort_by`; `total_rows` counts the rows
        that passed the filter. `edits`: the changes a page that takes them replays
        (`--edit`, the what-if view)."""
        opened = self.handles.get(handle)
        limit = _bounded(top)
        filtering = bool(contains or sort_by)
        bundle = opened.bundle
        name = view or summary.default_view(bundle)
        try:
            table, total = cli_common.view_table(
                bundle, name, 0 if filtering else limit, edits=edits or ()
            )
        except LoadError as exc:  # ViewError: one sentence naming the file's views
            raise AssistError(str(exc)) from exc
        if filtering:
            table = _filtered(table, contains, sort_by)
            table, total = table.head(limit), len(table)
        extra: dict[str, Any] = {}
        if bundle.job is not None:  # `perfview summary FOLDER`'s header and keys
            bundle, extra = job_cli.summary_parts(bundle)
        doc = _summary_doc(bundle, name, table, total, extra)
        words = ["summary", opened.source, "--view", name, "--top", str(limit)]
        words += [w for edit in edits or () for w in ("--edit", edit)] + ["--format", "json"]
        doc["produced_by"] = {"view": name, "command": _command(*words)}
        if filtering:
            doc["produced_by"]["filter"] = {"contains": contains, "sort_by": sort_by}
        return doc

    # ---------------------------------------------------------------------------- query

    def query(self, handle: str, sql: str, limit: int = DEFAULT_TOP * 5) -> dict[str, Any]:
        """One read-only SELECT over the document's tables; at most `limit` rows."""
        opened = self.handles.get(handle)
        if not query.table_names(opened.bundle):
            raise AssistError(
                f"{opened.source} has no tables to query (a folder of rank traces: open one "
                "of its files)"
            )
        if not query.available():
            raise AssistError(query.INSTALL_HINT)
        try:
            refusal = query.read_only_refusal(sql)
        except LoadError as exc:  # QueryError: DuckDB's one line
            raise AssistError(f"query failed: {exc}") from exc
        if refusal is not None:
            raise AssistError(f"query refused: {refusal} (nothing is written here)")
        cap = _bounded(limit)
        frame = self._run(opened, sql, cap + 1)
        out = io.StringIO()
        query_cli.write_result(opened.source, sql, frame.head(cap), "json", out)
        doc: dict[str, Any] = json.loads(out.getvalue())
        doc["truncated"] = len(frame) > cap
        doc["produced_by"] = {
            "query": sql,
            "command": _command("query", opened.source, sql, "--format", "json"),
        }
        return doc

    def _run(self, opened: Opened, sql: str, limit: int) -> pd.DataFrame:
        session = opened.query_session()
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            session.interrupt()

        timer = threading.Timer(self.query_timeout_s, stop)
        timer.start()
        try:
            return session.run(sql, limit=limit)
        except LoadError as exc:  # QueryError
            if stopped.is_set():
                raise AssistError(
                    f"query stopped after {self.query_timeout_s:g} s: narrow it (WHERE) "
                    "or aggregate (GROUP BY)"
                ) from exc
            if str(exc).startswith("Permission Error"):
                tables = ", ".join(session.tables)
                raise AssistError(
                    f"query refused: it reads a file; only this document's tables are "
                    f"read here ({tables})"
                ) from exc
            raise AssistError(f"query failed: {exc}") from exc
        finally:
            timer.cancel()

    # ------------------------------------------------------------------ recommendations

    def recommendations(self, handle: str) -> dict[str, Any]:
        """The recommendations view's rows, each with the ids of the slices that prove it
        and the query that lists them."""
        opened = self.handles.get(handle)
        bundle = opened.bundle
        page = summary.VIEWS[RECOMMENDATIONS]
        if bundle.format not in page.tables or not page.has_data(bundle):
            fits = ", ".join(summary.available_views(bundle))
            raise AssistError(
                f"{opened.source} has no recommendations (they read PyTorch profiler traces); "
                f"its views: {fits}"
            )
        assert bundle.timeline is not None  # a torch trace (`has_data`)
        findings = recommend.recommendations(bundle.timeline)
        table = recommend.findings_table(findings)
        doc = _summary_doc(bundle, RECOMMENDATIONS, table, len(table), {})
        for row, finding in zip(doc["rows"], findings, strict=True):
            ids = [int(i) for i in finding.rows[:EVIDENCE_IDS]]
            row["evidence_slices"] = ids
            if ids:
                row["evidence_query"] = (
                    "SELECT id, name, ts, dur, lane FROM slices "
                    f"WHERE id IN ({', '.join(map(str, ids))}) ORDER BY ts"
                )
        words = ["summary", opened.source, "--view", RECOMMENDATIONS, "--format", "json"]
        doc["produced_by"] = {"view": RECOMMENDATIONS, "command": _command(*words)}
        return doc

    # ----------------------------------------------------------------------------- diff

    def diff(
        self,
        handle_a: str,
        handle_b: str,
        view: str | None = None,
        metric: str | None = None,
        top: int = DEFAULT_TOP,
    ) -> dict[str, Any]:
        """B against baseline A, as `perfview diff A B --format json` prints it."""
        a, b = self.handles.get(handle_a), self.handles.get(handle_b)
        limit = _bounded(top)
        try:
            comparison = diff_profiles(
                a.bundle, b.bundle, view=view, metric=metric, match="basename", with_tree=False
            )
        except ValueError as exc:
            raise AssistError(f"cannot compare {a.source} with {b.source}: {exc}") from exc
        out = io.StringIO()
        write_comparison(comparison, limit, "json", out)
        doc: dict[str, Any] = json.loads(out.getvalue())
        words = ["diff", a.source, b.source, "--view", comparison.view]
        words += ["--metric", comparison.metric, "--top", str(limit), "--format", "json"]
        doc["produced_by"] = {"view": comparison.view, "command": _command(*words)}
        return doc


__all__ = ["DEFAULT_TOP", "MAX_ROWS", "QUERY_TIMEOUT_S", "Assistant"]
