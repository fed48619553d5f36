"""How a table's columns share its width: numbers at their numbers' width, the name column
the rest.

A kernel table's name column holds 150-character templated names, its numeric columns 6-10
characters under long headers ("registers per thread"). Sizing every column to its content
and capping each at a fixed width left the names elided at any window width while the
numbers' columns stayed as wide as their headers. Here a numeric column is as wide as its
numbers (its header on two lines when that is narrower), and the name column (`stretch`)
takes all the view has left (its full names in tooltips), and never less than `NAME_SHARE`
of the view while it has longer names: past that the table scrolls sideways. The user can
still drag any column wider; a name column dragged by hand is left as the user set it.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_WIDTH = 48  # px: a column never narrower (the header's sort arrow and a few digits)
TEXT_CAP = 420  # px: a text column that is not the name column (a stream, a file)
NAME_SHARE = 0.35  # of the viewport: what a too-long name column keeps when numbers crowd it
PADDING = 14  # px: cell margins and the sort indicator


def two_line_header(text: str) -> str:
    """`text` broken at the space nearest its middle ("registers\\nper thread"); unchanged
    when it has no space."""
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if not spaces:
        return text
    middle = len(text) / 2
    at = min(spaces, key=lambda i: abs(i - middle))
    return f"{text[:at]}\n{text[at + 1 :]}"


def fit_widths(
    content: Sequence[int],
    header: Sequence[int],
    numeric: Sequence[bool],
    stretch: int | None,
    viewport: int,
) -> list[int]:
    """Each column's width in px: `content` (its cells' widest text), `header` (its header's
    width, on the lines it is drawn on), `numeric` per column; `stretch` the name column (None:
    none) and `viewport` the width the table has. Pure, so a test pins the rules."""
    widths = []
    for i, (cells, head) in enumerate(zip(content, header, strict=True)):
        width = max(cells, head) + PADDING
        if not numeric[i] and i != stretch:
            width = min(width, TEXT_CAP)
        widths.append(max(width, MIN_WIDTH))
    if stretch is None or not 0 <= stretch < len(widths):
        return widths
    natural = widths[stretch]
    left = viewport - sum(w for i, w in enumerate(widths) if i != stretch)
    if natural <= left:
        widths[stretch] = left  # fills the view: no blank band right of the last column
    else:
        widths[stretch] = max(left, min(natural, int(viewport * NAME_SHARE)), MIN_WIDTH)
    return widths


__all__ = ["MIN_WIDTH", "NAME_SHARE", "PADDING", "TEXT_CAP", "fit_widths", "two_line_header"]
