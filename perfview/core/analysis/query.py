"""SQL over a loaded file with DuckDB: the bundle's columns as tables, scanned where they lie.

Why DuckDB: it scans numpy-backed pandas frames in place (no copy into a database), runs
group-bys and joins over tens of millions of slices in parallel, and takes SQL users already
know. The tables a bundle offers are listed by `table_names`; their columns are documented in
`TABLES` (the README's table of schemas is written from the same words).

Cheap tables (`slices`, `lanes`, …) are registered when a session opens: registering is a
reference, not a scan. Tables that cost work to build (`args` decodes every slice's JSON text,
`kernels` links each GPU activity to its launching op) are built on the first query that names
them. The connection is sandboxed (`enable_external_access=false`): a query reads the loaded
file's tables only, and can neither read nor write other files nor load extensions.

DuckDB is optional (`pip install 'perfview[query]'`); without it `QueryUnavailable` carries one
sentence saying how to get it.
"""

from __future__ import annotations

import atexit
import importlib
import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from perfview.core.analysis.query_tables import TABLES, TableDoc
from perfview.core.model import Bundle, Timeline
from perfview.core.model.errors import LoadError

INSTALL_HINT = (
    "SQL queries need DuckDB, which is not installed: "
    "pip install 'perfview[query]' (or pip install duckdb)"
)
I64 = np.int64


class QueryUnavailable(LoadError):
    """DuckDB is missing; `str()` says how to install it."""


class QueryError(LoadError):
    """A query failed (syntax, unknown column, interrupted…); `str()` is DuckDB's first line."""


def available() -> bool:
    """True when DuckDB can be imported."""
    try:
        importlib.import_module("duckdb")
    except ImportError:
        return False
    return True


def _duckdb() -> Any:
    try:
        return importlib.import_module("duckdb")
    except ImportError as exc:
        raise QueryUnavailable(INSTALL_HINT) from exc


def _frame(columns: dict[str, Any]) -> pd.DataFrame:
    """A frame sharing the given columns' memory (pandas copy-on-write: nothing is copied)."""
    return pd.DataFrame(columns, copy=False)


def slices_frame(timeline: Timeline) -> pd.DataFrame:
    """events + an `id` column, sharing the events' arrays."""
    ev = timeline.events
    cols: dict[str, Any] = {"id": np.arange(len(ev), dtype=I64)}
    cols.update({c: ev[c] for c in ev.columns})
    return _frame(cols)


def args_frame(timeline: Timeline) -> pd.DataFrame:
    """(slice, args JSON text) for every slice that has args; decoded once, here."""
    store = timeline.args
    starts = np.asarray(store.starts, dtype=I64)
    lens = np.asarray(store.lens, dtype=I64)
    rows = np.flatnonzero(lens > 0)
    blob = store.checked_blob()
    text = [
        blob[a : a + n].decode("utf-8", "replace")
        for a, n in zip(starts[rows].tolist(), lens[rows].tolist(), strict=True)
    ]
    return pd.DataFrame({"slice": rows.astype(I64), "args": pd.Series(text, dtype=object)})


def kernels_frame(timeline: Timeline) -> pd.DataFrame:
    """GPU activities with their launching runtime call and op (core.analysis.torch.op_kernels)."""
    from perfview.core.analysis.torch import op_kernels

    ev = timeline.events
    links = op_kernels.launches(timeline)
    rows = links["gpu_row"].to_numpy(dtype=I64)
    lane = ev["lane"].to_numpy()[rows]
    lane_device = timeline.lanes["device"].astype(object).to_numpy()
    device = lane_device[lane] if len(lane_device) else np.zeros(0, dtype=object)
    return pd.DataFrame(
        {
            "id": rows,
            "ts": ev["ts"].to_numpy()[rows],
            "dur": ev["dur"].to_numpy()[rows],
            "name": ev["name"].to_numpy()[rows].astype(object),
            "kind": ev["kind"].to_numpy()[rows].astype(object),
            "device": device.astype(object),
            "stream": ev["tid"].to_numpy()[rows],
            "lane": lane,
            "corr": ev["corr"].to_numpy()[rows],
            "ext_id": ev["ext_id"].to_numpy()[rows],
            "runtime": links["runtime_row"].to_numpy(dtype=I64),
            "op": links["op_row"].to_numpy(dtype=I64),
            "via": links["via"].astype(object),
        }
    )


def ops_frame(timeline: Timeline) -> pd.DataFrame:
    """cpu_op slices (a row subset of `slices`)."""
    ev = timeline.events
    rows = np.flatnonzero((ev["kind"] == "cpu_op").to_numpy())
    cols = ("ts", "dur", "name", "shape", "pid", "tid", "lane", "depth", "parent", "ext_id")
    out: dict[str, Any] = {"id": rows.astype(I64)}
    for col in cols:
        values = ev[col].to_numpy()[rows]
        out[col] = values.astype(object) if col in ("name", "shape") else values
    return pd.DataFrame(out)


Builder = Callable[[], pd.DataFrame]


def _timeline_tables(tl: Timeline) -> dict[str, Builder]:
    tables: dict[str, Builder] = {
        "slices": lambda: slices_frame(tl),
        "lanes": lambda: tl.lanes,
        "flows": lambda: tl.flows,
        "counters": lambda: tl.counters,
        "instants": lambda: tl.instants,
        "args": lambda: args_frame(tl),
        "ops": lambda: ops_frame(tl),
        "kernels": lambda: kernels_frame(tl),
    }
    if len(tl.memory):
        tables["memory"] = lambda: tl.memory
    return tables


def table_builders(bundle: Bundle) -> dict[str, Builder]:
    """Name → function building the table, for every table this bundle has."""
    tables: dict[str, Builder] = {}
    if bundle.timeline is not None:
        tables.update(_timeline_tables(bundle.timeline))
    if bundle.profile is not None:
        prof = bundle.profile
        tables["functions"] = lambda: _with_id(prof.functions)
        tables["edges"] = lambda: prof.edges
    if bundle.memory is not None:
        mem = bundle.memory
        tables.update(samples=lambda: mem.samples, children=lambda: mem.children)
        tables["spans"] = lambda: mem.spans
    if bundle.lines is not None:
        report = bundle.lines
        tables.update(lines=lambda: report.lines, blocks=lambda: report.blocks)
        functions = report.functions
        if functions is not None:  # a report's own per-function table (Scalene's)
            tables["scalene_functions"] = lambda: functions
    return tables


def _with_id(frame: pd.DataFrame) -> pd.DataFrame:
    cols: dict[str, Any] = {"id": np.arange(len(frame), dtype=I64)}
    cols.update({c: frame[c] for c in frame.columns})
    return _frame(cols)


def table_names(bundle: Bundle) -> list[str]:
    return list(table_builders(bundle))


# Tables whose name/cat columns are categorical in the model: the SQL view casts them to text
# so that ORDER BY name sorts by the text (DuckDB's ENUM sorts by category order).
_TEXT_CASTS = {
    "slices": ("name", "cat", "kind", "shape"),
    "counters": ("name",),
    "instants": ("name", "cat", "scope"),
    "flows": ("name", "cat"),
}
# Built on first use only: each costs a pass over the data.
_LAZY = frozenset({"args", "kernels", "ops"})


def one_line(exc: BaseException) -> str:
    """DuckDB's message without its caret diagram: the first line, trimmed."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else type(exc).__name__
    return first


def _whole_sums(frame: pd.DataFrame, types: list[str]) -> pd.DataFrame:
    """`sum()` of BIGINT is a 128-bit HUGEINT, which reaches pandas as float64: back to int64
    when every value is whole and fits, so ns stay exact in JSON and CSV."""
    for i, kind in enumerate(types):
        if kind not in ("HUGEINT", "UHUGEINT") or i >= frame.shape[1]:
            continue
        values = frame.iloc[:, i].to_numpy(dtype=np.float64)
        if np.isfinite(values).all() and (np.abs(values) < 2.0**62).all():
            frame.isetitem(i, values.astype(I64))
    return frame


# Open sessions, closed at exit: a DuckDB connection still alive when the interpreter shuts
# down makes its bindings (nanobind) print a page of "leaked" warnings on stderr.
_OPEN: weakref.WeakSet[QuerySession] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for session in list(_OPEN):
        session.close()


class QuerySession:
    """One DuckDB connection over one bundle. `run` may be called from a worker thread;
    `interrupt` from any other thread stops the query in flight."""

    def __init__(self, bundle: Bundle) -> None:
        duckdb = _duckdb()
        self._duckdb = duckdb
        self.conn: Any = duckdb.connect(
            config={"enable_external_access": False, "autoinstall_known_extensions": False}
        )
        _OPEN.add(self)
        self._builders = table_builders(bundle)
        self._registered: set[str] = set()
        self._lock = threading.Lock()
        for name in self._builders:
            if name not in _LAZY:
                self._register(name)

    @property
    def tables(self) -> list[str]:
        return list(self._builders)

    def _register(self, name: str) -> None:
        frame = self._builders[name]()
        casts = [c for c in _TEXT_CASTS.get(name, ()) if c in frame.columns]
        if not casts:
            self.conn.register(name, frame)
        else:
            raw = f"_raw_{name}"
            self.conn.register(raw, frame)
            cols = [f'"{c}"::VARCHAR AS "{c}"' if c in casts else f'"{c}"' for c in frame.columns]
            if name == "slices":
                cols.insert(cols.index('"dur"') + 1, "ts + dur AS end_ts")
            self.conn.execute(f"CREATE VIEW {name} AS SELECT {', '.join(cols)} FROM {raw}")
        self._registered.add(name)

    def _ensure(self, sql: str) -> None:
        """Build the lazy tables the query names (a word match; a false hit only costs time)."""
        for name in _LAZY & set(self._builders):
            if name not in self._registered and re.search(rf"\b{name}\b", sql, re.IGNORECASE):
                self._register(name)

    def run(self, sql: str, limit: int | None = None) -> pd.DataFrame:
        """The query's result as a frame (empty for statements without rows); QueryError with
        DuckDB's first message line when it fails or is interrupted. `limit` (one SELECT
        only): at most that many rows, cut inside DuckDB so a huge result is never built."""
        with self._lock:
            if self.conn is None:
                raise QueryError("the query session is closed")
            try:
                self._ensure(sql)
                if limit is not None:
                    return self._limited(sql, limit)
                cursor = self.conn.execute(sql)
                if cursor.description is None:
                    return pd.DataFrame()
                types = [str(d[1]) for d in cursor.description]
                return _whole_sums(cursor.fetch_df(), types)
            except self._duckdb.Error as exc:
                raise QueryError(one_line(exc)) from exc

    def _limited(self, sql: str, limit: int) -> pd.DataFrame:
        """At most `limit` rows of one SELECT, cut by DuckDB (a relation with LIMIT on top: the
        whole result is never built); the relations are closed here, not left to the
        garbage collector."""
        relation = self.conn.sql(sql)
        limited = relation.limit(limit)
        try:
            return _whole_sums(limited.df(), [str(t) for t in limited.types])
        finally:
            limited.close()
            relation.close()

    def interrupt(self) -> None:
        """Stop the running query (safe from any thread); `run` then raises QueryError."""
        conn = self.conn
        if conn is not None:
            conn.interrupt()

    def close(self) -> None:
        """Close the connection and drop it (idempotent); `run` then raises QueryError."""
        conn, self.conn = self.conn, None
        _OPEN.discard(self)
        if conn is not None:
            conn.close()


def read_only_refusal(sql: str) -> str | None:
    """Why `sql` may not run where nothing may be written (the assistants' server), or None
    when it is one SELECT. Parsed by DuckDB itself (its statement types), not by a pattern:
    `COPY … TO`, `CREATE`, `ATTACH`, `SET`, `INSTALL`/`LOAD` and the rest are refused before
    they run; a SELECT reading another file (`read_csv('…')`) is refused by the session's
    sandbox when it runs. A query DuckDB cannot parse: QueryError with its first line."""
    duckdb = _duckdb()
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(one_line(exc)) from exc
    if len(statements) != 1:
        return f"one statement per query, not {len(statements)}"
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        return f"only a read-only SELECT runs here, not a {kind.name} statement"
    return None


def run_query(bundle: Bundle, sql: str) -> pd.DataFrame:
    """One query on one bundle (the CLI's path)."""
    session = QuerySession(bundle)
    try:
        return session.run(sql)
    finally:
        session.close()


__all__ = [
    "INSTALL_HINT",
    "TABLES",
    "QueryError",
    "QuerySession",
    "QueryUnavailable",
    "TableDoc",
    "available",
    "one_line",
    "read_only_refusal",
    "run_query",
    "table_builders",
    "table_names",
]
