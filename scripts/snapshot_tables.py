"""Write every `perfview summary` view of every sample as JSON: a snapshot to compare refactors.

    python scripts/snapshot_tables.py OUTDIR [--samples DIR] [--extra FILE ...] [--no-cache]

One file per (input, view): OUTDIR/<input relative path>/<view>.json, with exactly what
`perfview summary FILE --view VIEW --top 0 --format json` prints (the `path` field is made
relative so two checkouts compare byte for byte). A view that fails writes its error text.
Compare two snapshots with `diff -r A B`.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

from perfview.cli_common import write_summary
from perfview.core.model.errors import LoadError
from perfview.core.pages import summary
from perfview.loaders import FRESH, LoadOptions, load

DEFAULT_SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "samples"


def _inputs(samples: Path, extra: list[Path]) -> list[tuple[str, Path]]:
    found = [
        (str(p.relative_to(samples)), p)
        for p in sorted(samples.rglob("*"))
        if p.is_file() and p.name != "SOURCES.md"
    ]
    return found + [(f"extra/{p.name}", p) for p in extra]


def snapshot_one(label: str, path: Path, out: Path, *, use_cache: bool) -> int:
    """Write every applicable view of one input; returns how many files were written."""
    target = out / label
    target.mkdir(parents=True, exist_ok=True)
    try:
        bundle = load(path, options=LoadOptions() if use_cache else FRESH)
    except LoadError as exc:
        (target / "_load_error.txt").write_text(str(exc) + "\n")
        return 1
    written = 0
    for view in summary.applicable_views(bundle):
        buf = io.StringIO()
        try:
            table = summary.summarize(bundle, view)
            write_summary(bundle, view, table, 0, "json", buf)
            doc = json.loads(buf.getvalue())
            doc["path"] = label
            text = json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=0)
        except Exception as exc:  # a failing view is part of the snapshot
            text = f"error: {type(exc).__name__}: {exc}"
        (target / f"{view}.json").write_text(text + "\n")
        written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES)
    parser.add_argument("--extra", type=Path, nargs="*", default=[])
    parser.add_argument("--no-cache", action="store_true", help="parse, never read the cache")
    args = parser.parse_args(argv)
    if not args.samples.is_dir():
        print(f"no samples folder at {args.samples}", file=sys.stderr)
        return 2
    total = 0
    for label, path in _inputs(args.samples, args.extra):
        total += snapshot_one(label, path, args.out, use_cache=not args.no_cache)
    print(f"wrote {total} view snapshots under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
