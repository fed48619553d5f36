"""`Finding`: one recommendation with the numbers behind it (shared by the rule modules)."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("high", "medium", "low")


@dataclass(frozen=True)
class Finding:
    """One recommendation: what, how bad, the evidence, and the metric behind it.

    `rows` are event row ids of the slices that prove it (the GUI selects them and zooms to the
    first); `where` names the place (Python function, annotation, operator) when a rule knows it.
    """

    title: str
    severity: str  # one of SEVERITIES
    evidence: str
    metric: str
    value: float
    threshold: float
    rows: tuple[int, ...] = ()
    where: str = ""


__all__ = ["SEVERITIES", "Finding"]
