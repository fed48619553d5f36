"""Find slices by name or by their args: substring, /regex/, or key=value.

Why here and pure: the timeline's search box, its results list and tests all ask the same
question, and on a 1 GB trace the answer must come from whole-column work: names are matched
once per distinct name (then spread to the slices by code), args are matched by scanning the
`ArgsStore` blob with one compiled regex (C speed) and mapping hit offsets back to slices,
never by decoding a million JSON objects. Only key=value decodes, and only the slices whose
text already matched the key and value.

Query forms (case-insensitive):
    text        name or args text contains `text`
    /pattern/   name or args text matches the regular expression
    key=value   the slice's arg `key` equals `value` (strings as written, numbers and lists
                as compact JSON: `Input Dims=[[2,3]]`); `key=` alone: the slice has the key
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfview.core.model import ArgsStore
from perfview.core.model.errors import LoadError

I64 = np.int64
KEY_VALUE = re.compile(r"^\s*([^=/][^=]*?)\s*=\s*(.*?)\s*$")


class SearchError(LoadError):
    """The query cannot be run (a bad regular expression); `str()` is one sentence."""


@dataclass(frozen=True)
class Query:
    kind: str  # "text", "regex" or "arg"
    text: str = ""
    key: str = ""
    value: str = ""

    def describe(self) -> str:
        if self.kind == "arg":
            return f"arg {self.key} = {self.value}" if self.value else f"has arg {self.key}"
        return f"/{self.text}/" if self.kind == "regex" else f"“{self.text}”"


def parse_query(text: str) -> Query:
    """The query a search-box text stands for (see the module docstring)."""
    stripped = text.strip()
    if len(stripped) >= 2 and stripped.startswith("/") and stripped.endswith("/"):
        return Query("regex", stripped[1:-1])
    match = KEY_VALUE.match(stripped)
    if match and '"' not in match.group(1):
        return Query("arg", key=match.group(1), value=match.group(2))
    return Query("text", stripped)


def _pattern(query: Query) -> re.Pattern[str]:
    source = query.text if query.kind == "regex" else re.escape(query.text)
    try:
        return re.compile(source, re.IGNORECASE)
    except re.error as exc:
        raise SearchError(f"not a valid regular expression: {exc}") from exc


def _name_rows(categories: np.ndarray, codes: np.ndarray, pattern: re.Pattern[str]) -> np.ndarray:
    hit = np.fromiter(
        (pattern.search(str(c)) is not None for c in categories), dtype=bool, count=len(categories)
    )
    return np.flatnonzero(hit[codes] & (codes >= 0)) if len(codes) else np.zeros(0, dtype=I64)


# Plain text and key=value are matched case-sensitively on a lower-cased copy of the blob
# (Python's IGNORECASE matching runs several times slower than a literal search), made chunk
# by chunk so a 1 GB trace's args never get a second full copy.
CHUNK = 64 << 20
OVERLAP = 4096  # longest match found across a chunk edge


def _spans_lowered(blob: bytes, pattern: re.Pattern[bytes]) -> np.ndarray:
    """(start, end) of every match of `pattern` in the ASCII-lower-cased `blob`."""
    view = memoryview(blob)
    found: list[int] = []
    for lo in range(0, len(blob), CHUNK):
        window = bytes(view[lo : lo + CHUNK + OVERLAP]).lower()  # ASCII only, as wanted
        for m in pattern.finditer(window):
            if m.start() < CHUNK:  # the overlap belongs to the next chunk
                found += (lo + m.start(), lo + m.end())
    return np.asarray(found, dtype=I64).reshape(-1, 2)


def _blob_rows(args: ArgsStore, pattern: re.Pattern[bytes], lowered: bool = False) -> np.ndarray:
    """Slices whose args text contains a match (a match spanning two slices' args is not one:
    the blob may hold other bytes between them, so each hit is checked against its span).
    `lowered`: `pattern` is lower-case and case-sensitive, matched on the lower-cased blob."""
    starts = np.asarray(args.starts, dtype=I64)
    lens = np.asarray(args.lens, dtype=I64)
    if not len(starts) or not args.blob:
        return np.zeros(0, dtype=I64)
    blob = args.checked_blob()
    if lowered:
        spans = _spans_lowered(blob, pattern)
    else:
        spans = np.fromiter(
            (i for m in pattern.finditer(blob) for i in m.span()), dtype=I64
        ).reshape(-1, 2)
    if not len(spans):
        return np.zeros(0, dtype=I64)
    hits, ends = spans[:, 0], spans[:, 1]
    order = np.argsort(starts, kind="stable")
    sorted_starts = starts[order]
    pos = np.searchsorted(sorted_starts, hits, side="right") - 1
    ok = pos >= 0
    rows = order[pos[ok]]
    inside = ends[ok] <= starts[rows] + lens[rows]
    return np.unique(rows[inside & (lens[rows] > 0)])


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _arg_rows(args: ArgsStore, key: str, value: str) -> np.ndarray:
    """Slices whose arg `key` equals `value` (any value when `value` is empty)."""
    prefix = rb'"' + re.escape(key.lower().encode()) + rb'"\s*:\s*'
    if value and value[0] not in "[{":
        # Pre-filter on the raw text (a scalar, quoted or not), then decode only those
        # slices to be exact; lists and objects are compared after decoding only.
        prefix += rb'"?' + re.escape(value.lower().encode()) + rb'"?\s*[,}]'
    lowered = key.isascii() and value.isascii()
    pattern = re.compile(prefix) if lowered else re.compile(prefix, re.IGNORECASE)
    candidates = _blob_rows(args, pattern, lowered)
    want = value.replace(" ", "").lower()
    keep = []
    for row in candidates.tolist():
        decoded = args.get(row)
        found = next((v for k, v in decoded.items() if k.lower() == key.lower()), None)
        if found is None and not any(k.lower() == key.lower() for k in decoded):
            continue
        if not value or _value_text(found).replace(" ", "").lower() == want:
            keep.append(row)
    return np.asarray(keep, dtype=I64)


def search_rows(
    query: Query | str,
    categories: np.ndarray,
    codes: np.ndarray,
    args: ArgsStore,
    ts: np.ndarray | None = None,
) -> np.ndarray:
    """Rows of the slices that match, in time order when `ts` is given (else row order).

    `categories`/`codes` are the slice names as distinct values and one code per slice (as
    `timeline_layout.TimelineData` holds them)."""
    q = parse_query(query) if isinstance(query, str) else query
    if q.kind == "arg":
        if not q.key:
            return np.zeros(0, dtype=I64)
        rows = _arg_rows(args, q.key, q.value)
    else:
        if not q.text:
            return np.zeros(0, dtype=I64)
        pattern = _pattern(q)
        by_name = _name_rows(categories, np.asarray(codes, dtype=I64), pattern)
        if q.kind == "text" and q.text.isascii():
            literal = re.compile(re.escape(q.text.lower().encode()))
            rows = np.union1d(by_name, _blob_rows(args, literal, lowered=True))
        else:
            source = q.text if q.kind == "regex" else re.escape(q.text)
            try:
                blob_pattern = re.compile(source.encode(), re.IGNORECASE)
            except re.error as exc:  # valid as text, not as bytes (e.g. \p classes)
                raise SearchError(f"not a valid regular expression: {exc}") from exc
            rows = np.union1d(by_name, _blob_rows(args, blob_pattern))
    rows = rows.astype(I64)
    if ts is not None and len(rows):
        rows = rows[np.argsort(np.asarray(ts)[rows], kind="stable")]
    return rows


__all__ = ["Query", "SearchError", "parse_query", "search_rows"]
