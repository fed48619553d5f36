"""Flow arrows of the selected timeline slice: its flow events (torch launch → kernel, async
links), else the slices linked to it by correlation id, drawn as segments with arrow heads.

Its own module so that `timeline_view.py` keeps the plot and its interaction; the "all flows"
and "no flows" modes of the Tracks tab are `tracks_panel.draw_flows`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg

from perfview.core.layout import timeline_layout
from perfview.qt.views import tracks_panel

MAX_ARROW_HEADS = 40


def draw(view: Any, row: int) -> None:
    """The flows of slice `row` on `view.flow_item` (and arrow heads), per the flow mode."""
    if getattr(view, "flow_mode", "selected") != "selected":
        tracks_panel.draw_flows(view)  # all flows, or none (Tracks tab)
        return
    flows = view.timeline.flows
    pairs: list[tuple[int, int]] = []
    if len(flows):
        src = flows["src_event"].to_numpy()
        dst = flows["dst_event"].to_numpy()
        hit = ((src == row) | (dst == row)) & (src >= 0) & (dst >= 0)
        pairs = list(zip(src[hit].tolist(), dst[hit].tolist(), strict=True))
    if not pairs:
        pairs = [
            (row, int(r)) for r in timeline_layout.linked_events(view.timeline.events, row, 50)
        ]
    for head in view._arrow_heads:
        view.plot.removeItem(head)
    view._arrow_heads = []
    if not pairs:
        view.flow_item.setData([], [])
        return
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    xs = np.empty(2 * len(a))
    ys = np.empty(2 * len(a))
    xs[0::2], xs[1::2] = view._ts[a], view._ts[b]
    ys[0::2], ys[1::2] = view.event_row[a] + 0.5, view.event_row[b] + 0.5
    view.flow_item.setData(xs, ys)
    heads = zip(xs[1::2].tolist(), ys[1::2].tolist(), (ys[1::2] - ys[0::2]).tolist(), strict=True)
    for x, y, down in list(heads)[:MAX_ARROW_HEADS]:
        # Screen angles (rows grow downwards): -90 points down, 90 up, 180 right.
        angle = -90 if down > 0 else (90 if down < 0 else 180)
        head = pg.ArrowItem(
            pos=(x, y),
            angle=angle,
            headLen=9,
            tipAngle=40,
            pen=None,
            brush=pg.mkBrush(20, 20, 20),
        )
        head.setZValue(31)
        view.plot.addItem(head)
        view._arrow_heads.append(head)
