"""The Overview a load prepares leaves its findings for later (issue 20: a reopened 1 GB trace
draws its first page without waiting ~1 s for the recommendations), and finding them later
gives exactly what one full computation gives."""

from __future__ import annotations

from perfview.core import pages
from perfview.core.analysis.torch import recommend
from perfview.core.pages import data as page_data
from perfview.loaders import load
from tests.conftest import sample


def test_the_first_overview_leaves_its_findings_for_later() -> None:
    bundle = load(sample("kineto_gpu/kineto_resnet50_w0_1623143089861.pt.trace.json.gz"))
    tl = bundle.timeline
    assert tl is not None
    first = pages.prepare_first("overview", bundle)
    assert isinstance(first, page_data.OverviewData)
    assert first.findings is None
    assert pages.derived("overview", first) == {}  # nothing to hand the Recommendations page
    full = first.with_findings(tl)
    titles = [f.title for f in recommend.recommendations(tl)]
    assert titles
    assert [f.title for f in full.findings or []] == titles
    assert full.with_findings(tl) is full
    assert full.devices is first.devices  # the rest is not computed again
    assert pages.derived("overview", full) == {"recommendations": full.findings}
    # every other page: the same as `prepare`
    assert pages.prepare_first("timeline", bundle) is not None
