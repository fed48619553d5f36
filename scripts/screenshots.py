"""Write every view of a file as PNG: `python scripts/screenshots.py FILE OUTDIR [--size WxH]`.

Uses the same code path as `perfview --screenshot` (perfview.qt.screenshot), so what it shows is
what the app shows. Works offscreen (QT_QPA_PLATFORM=offscreen) or under Xvfb.
Prints one line per PNG written; exit 0 on success, 2 when the file cannot be opened.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="profile, trace or memory file")
    parser.add_argument("outdir", help="folder for the PNGs (created if missing)")
    parser.add_argument("--size", default="1400x900", help="window size WxH")
    parser.add_argument("--stem", help="file name prefix (default: the input's name)")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from perfview.qt import screenshot as shots
    from perfview.qt.app import make_app
    from perfview.qt.main_window import MainWindow
    from perfview.qt.settings import Settings

    make_app()
    window = MainWindow(Settings.ephemeral())
    width, height = (int(v) for v in args.size.lower().split("x", 1))
    window.resize(width, height)
    stem = args.stem or Path(args.file).name.split(".")[0]
    code, written = shots.run(window, args.file, shots.every(args.outdir, stem))
    for path in written:
        print(path)
    window.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
