"""The assistant opens URLs as the CLI does (`perfview mcp`'s open tool, through the store's
remote mirror): a job on a real S3 server (moto, 127.0.0.1) reads as the local folder."""

from __future__ import annotations

from typing import Any

import pytest

from perfview.assist.handles import AssistError, Handles
from perfview.core.pages import summary
from tests.store.test_remote import BUCKET, RANKS, s3  # noqa: F401  (the S3 server fixture)


def test_the_assistant_opens_an_s3_job_as_the_local_folder(s3: Any) -> None:  # noqa: F811
    if not RANKS.is_dir():
        pytest.skip(f"{RANKS} is absent")
    handles = Handles()
    try:
        url = f"s3://{BUCKET}/ranks"
        remote = handles.open(url)
        local = handles.open(str(RANKS))
        assert remote.source == url
        assert handles.listing()[0] == {"handle": remote.handle, "path": url}
        assert remote.bundle.format == local.bundle.format == "job"
        for view in ("ranks", "collectives", "stragglers"):
            a = summary.summarize(remote.bundle, view).drop(columns=["file"], errors="ignore")
            b = summary.summarize(local.bundle, view).drop(columns=["file"], errors="ignore")
            assert a.equals(b), view
        with pytest.raises(AssistError, match=f"cannot open s3://{BUCKET}/nothing-here"):
            handles.open(f"s3://{BUCKET}/nothing-here")
    finally:
        handles.close_all()
