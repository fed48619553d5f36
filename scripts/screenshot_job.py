"""Pictures of the Job page: one PNG per page of a job (the page registry's "job" tabs).

    python scripts/screenshot_job.py OUT_DIR SOURCE… [--size 1400x900]

SOURCE is a folder, a glob or rank files, as for `perfview summary`. Renders offscreen.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--size", default="1400x900")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from perfview.core.analysis.torch.job import document
    from perfview.jobs import open_job
    from perfview.qt.views.job_view import JobView, PreparedJob

    app = QApplication.instance() or QApplication(sys.argv[:1])
    job = open_job(args.sources)
    view = JobView(PreparedJob.of(document(job, Path(args.sources[0]))))
    width, height = (int(v) for v in args.size.split("x"))
    view.resize(width, height)
    view.show()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in view.page_names():  # the registry's "job" tabs
        view.show_page(name)
        app.processEvents()
        target = args.out / f"job_{name}.png"
        view.grab().save(str(target))
        print(target)
    view.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
