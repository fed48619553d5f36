"""memory_profiler's line-by-line text report (`python -m memory_profiler`, `@profile`).

One block per profiled function::

    Filename: main.py

    Line #    Mem usage    Increment  Occurrences   Line Contents
    =============================================================
        18    779.3 MiB    779.3 MiB           1   @profile
        19                                         def train_and_log():

The Occurrences column exists since 0.58; `--precision` changes the number of decimals and so
the column widths. Rows are therefore parsed with a regex; the source text (indentation kept)
follows the numbers after three spaces, or starts at the template's fixed column in rows that
never ran.

Files often hold several reports (output appended run after run, or `@profile(stream=f)`
writing one block per call). A new report starts when a block's function already appeared in
the current report, or when other text (program output) separates two blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from perfview.core.model import Bundle, LineReport, schema
from perfview.core.model.errors import EmptyProfile
from perfview.core.model.progress import Progress, noop
from perfview.loaders.base import PLAIN

NAME: Final = "memprof_text"
DESCRIPTION = "a memory_profiler line-by-line report"
EXTENSIONS = (".txt", ".log", ".mprof.txt")
CAPABILITIES = PLAIN  # parsed here, in Python and numpy: nothing to compile

_HEADER = re.compile(r"^\s*Line #\s+Mem usage\s+Increment(\s+Occurrences)?\s+Line Contents")
_RULE = re.compile(r"^=+\s*$")
_UNIT = {"B": 1.0, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}
_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)"
# Line numbers and occurrences are capped at 18 digits so they always fit int64 (a longer
# digit run is not a report row).
_ROW_MEM = re.compile(rf"^\s*(\d{{1,18}})\s+{_NUM} (B|KiB|MiB|GiB)\s+{_NUM} (B|KiB|MiB|GiB)")
_ROW_OCC = re.compile(r"\s+(\d{1,18})(?!\d)")
_ROW_BARE = re.compile(r"^\s*(\d{1,18})(?=\s|$)")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)")


def sniff(head: bytes, path: Path) -> bool:
    """True when the head holds a report header ("Filename:", "Line #", "Mem usage")."""
    return b"Line #" in head and b"Mem usage" in head and b"Filename:" in head


@dataclass
class _Block:
    file: str
    report: int
    rows: list[tuple[int, float, float, float, str]] = field(default_factory=list)
    function: str = ""


def refuse(head: bytes, path: Path) -> str | None:
    """Nothing this format's neighbours write needs a special refusal."""
    return None


def _parse_row(
    line: str, col: int, occurrences: bool
) -> tuple[int, float, float, float, str] | None:
    """One report row → (line, mem bytes, increment bytes, occurrences, content) or None."""
    m = _ROW_MEM.match(line)
    if m:
        end = m.end()
        occ = np.nan
        if occurrences:
            o = _ROW_OCC.match(line, end)
            if o:
                occ, end = float(o.group(1)), o.end()
        content = line[end:].removeprefix("   ")  # the template puts 3 spaces before it
        mem = float(m.group(2)) * _UNIT[m.group(3)]
        inc = float(m.group(4)) * _UNIT[m.group(5)]
        return int(m.group(1)), mem, inc, occ, content
    b = _ROW_BARE.match(line)
    if b and not line[b.end() : col].strip():
        return int(b.group(1)), np.nan, np.nan, np.nan, line[col:]
    return None


def _parse(text: str) -> tuple[list[_Block], int]:
    """Blocks in file order and the number of reports."""
    blocks: list[_Block] = []
    lines = text.splitlines()
    report = 0
    seen: set[tuple[str, int]] = set()  # (file, first line) of blocks in the current report
    other_text = False  # non-report text since the last block
    file = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("Filename:"):
            file = line[len("Filename:") :].strip()
            i += 1
            continue
        header = _HEADER.match(line)
        if not header:
            if line.strip() and blocks:
                other_text = True
            i += 1
            continue
        occurrences = header.group(1) is not None
        # Unexecuted rows pad the numeric columns to the template's widths; "Occurrences"
        # is one character wider than its column, so the header is shifted by one there.
        col = line.index("Line Contents") - (1 if occurrences else 0)
        i += 1
        if i < len(lines) and _RULE.match(lines[i]):
            i += 1
        block = _Block(file=file, report=report)
        while i < len(lines) and lines[i].strip():
            row = _parse_row(lines[i], col, occurrences)
            if row is None:
                break
            block.rows.append(row)
            i += 1
        if not block.rows:
            continue
        first = (file, block.rows[0][0])
        if blocks and (other_text or first in seen):
            report += 1
            seen = set()
            block.report = report
        seen.add(first)
        other_text = False
        for row in block.rows:
            d = _DEF.match(row[4])
            if d:
                block.function = d.group(1)
                break
        blocks.append(block)
        file = ""
    return blocks, report + 1 if blocks else 0


def load(path: Path, *, progress: Progress = noop, compiled: bool | None = None) -> Bundle:
    """Read every block of every appended report into a `LineReport`."""
    path = Path(path)
    progress(0.0, "reading memory_profiler report")
    text = path.read_bytes().decode("utf-8", errors="replace")
    blocks, n_reports = _parse(text)
    if not blocks:
        raise EmptyProfile("the memory_profiler report holds no function blocks")
    progress(0.7, "building tables")
    sizes = np.asarray([len(b.rows) for b in blocks], dtype=np.int64)
    rows = [r for b in blocks for r in b.rows]
    values = np.asarray([r[1:4] for r in rows], dtype=np.float64).reshape(-1, 3)
    lines = pd.DataFrame(
        {
            "report": np.repeat([b.report for b in blocks], sizes).astype(np.int32),
            "block": np.repeat(np.arange(len(blocks)), sizes).astype(np.int32),
            "file": pd.Series(np.repeat([b.file for b in blocks], sizes), dtype=object),
            "line": np.asarray([r[0] for r in rows], dtype=np.int64),
            "mem_bytes": values[:, 0],
            "increment_bytes": values[:, 1],
            "occurrences": values[:, 2],
            "content": pd.Series([r[4] for r in rows], dtype=object),
        }
    )
    schema.validate(lines, schema.LINES, "lines")
    block_df = pd.DataFrame(
        {
            "block": np.arange(len(blocks), dtype=np.int32),
            "report": np.asarray([b.report for b in blocks], dtype=np.int32),
            "file": pd.Series([b.file for b in blocks], dtype=object),
            "function": pd.Series([b.function for b in blocks], dtype=object),
            "first_line": np.asarray([b.rows[0][0] for b in blocks], dtype=np.int64),
            "n_lines": sizes,
        }
    )
    progress(1.0, "done")
    return Bundle(
        format=NAME,
        path=path,
        lines=LineReport(lines=lines, blocks=block_df),
        counts={"functions": len(blocks), "lines": len(lines), "reports": n_reports},
    )
