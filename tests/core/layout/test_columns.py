"""The table column split (core/layout/columns.py): numbers at their numbers' width, the name
column the rest, long headers on two lines."""

from __future__ import annotations

from perfview.core.layout.columns import (
    MIN_WIDTH,
    NAME_SHARE,
    PADDING,
    TEXT_CAP,
    fit_widths,
    two_line_header,
)


def test_a_long_header_breaks_at_the_space_nearest_its_middle() -> None:
    assert two_line_header("registers per thread") == "registers\nper thread"
    assert two_line_header("shared memory") == "shared\nmemory"
    assert two_line_header("calls") == "calls"


def test_the_name_column_fills_what_the_numbers_leave() -> None:
    # name, calls, total, stream: the name is short enough to show whole
    widths = fit_widths([300, 40, 60, 70], [40, 40, 40, 50], [False, True, True, False], 0, 1400)
    assert widths[1:] == [40 + PADDING, 60 + PADDING, 70 + PADDING]
    assert sum(widths) == 1400  # no blank band, and the stream column stays narrow
    assert widths[0] == 1400 - sum(widths[1:])


def test_a_name_longer_than_the_view_takes_its_share_then_scrolls() -> None:
    widths = fit_widths([1800, 40, 60], [40, 40, 40], [False, True, True], 0, 1000)
    assert widths[0] == 1000 - (40 + PADDING) - (60 + PADDING)  # all the numbers leave
    widths = fit_widths([1800, 400, 400], [40, 40, 40], [False, True, True], 0, 1000)
    assert widths[0] == int(1000 * NAME_SHARE)  # at least its share: the rest scrolls
    # a name that fits in what the numbers leave is never cut
    widths = fit_widths([600, 40, 60], [40, 40, 40], [False, True, True], 0, 1000)
    assert widths[0] == 1000 - (40 + PADDING) - (60 + PADDING)


def test_other_text_columns_are_capped_and_every_column_has_a_minimum() -> None:
    widths = fit_widths([200, 900, 5], [40, 40, 10], [False, False, True], 0, 800)
    assert widths[1] == TEXT_CAP
    assert widths[2] == MIN_WIDTH
    # no name column: each column at its content
    assert fit_widths([100, 30], [40, 60], [False, True], None, 2000) == [
        100 + PADDING,
        60 + PADDING,
    ]


def test_track_axis_names_a_process_once_then_its_threads_alone() -> None:
    from perfview.core.layout.track_arrange import axis_labels

    labels = [
        "Browser (6488) · CrBrowserMain",
        "Browser (6488) · Chrome_IOThread",
        "GPU 0 · stream 7",
        "GPU 0 · stream 23",
        "▸ Renderer (12) (3 tracks)",
    ]
    processes = ["Browser (6488)", "Browser (6488)", "GPU 0", "GPU 0", ""]
    out = axis_labels(labels, processes, [6488, 6488, 0, 0, 12], [4, 2, 1, 1, 1])
    assert out == [
        "Browser (6488)\nCrBrowserMain",  # room for two lines: the process above
        "Chrome_IOThread",
        "GPU 0 · stream 7",  # one row: on one line
        "stream 23",
        "▸ Renderer (12) (3 tracks)",  # a collapsed process keeps its summary label
    ]
