"""Write every `perfview summary` view of every sample as JSON: a snapshot to compare refactors.

    python scripts/snapshot_tables.py OUTDIR [--samples DIR] [--extra FILE ...] [--no-cache]
    python scripts/snapshot_tables.py tests/data/table_snapshot.json --digest --no-cache

One file per (input, view): OUTDIR/<input relative path>/<view>.json, with exactly what
`perfview summary FILE --view VIEW --top 0 --format json` prints (the `path` field is made
relative so two checkouts compare byte for byte). A view that fails writes its error text.
Compare two snapshots with `diff -r A B`. With --digest, OUT is one JSON file of a sha256 per
(sample, view) instead: the compact snapshot that tests/loaders/test_table_snapshot.py keeps.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from dataclasses import replace
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


def view_texts(
    label: str, path: Path, *, use_cache: bool, compiled: bool | None = None
) -> dict[str, str]:
    """Every applicable view of one input as {file name: text}: `<view>.json` each, or
    `_load_error.txt` when the input does not load. `compiled`: `LoadOptions.compiled`."""
    options = LoadOptions() if use_cache else FRESH
    try:
        bundle = load(path, options=replace(options, compiled=compiled))
    except LoadError as exc:
        return {"_load_error.txt": str(exc) + "\n"}
    texts = {}
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
        texts[f"{view}.json"] = text + "\n"
    return texts


def snapshot_one(label: str, path: Path, out: Path, *, use_cache: bool) -> int:
    """Write every applicable view of one input; returns how many files were written."""
    target = out / label
    target.mkdir(parents=True, exist_ok=True)
    texts = view_texts(label, path, use_cache=use_cache)
    for name, text in texts.items():
        (target / name).write_text(text)
    return len(texts)


def digests(
    label: str, path: Path, *, use_cache: bool, compiled: bool | None = None
) -> dict[str, str]:
    """sha256 of each view's text (as `snapshot_one` writes it), by file name."""
    texts = view_texts(label, path, use_cache=use_cache, compiled=compiled)
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in texts.items()}


def write_digest(samples: Path, out: Path, *, use_cache: bool) -> int:
    """The compact snapshot tests/loaders/test_table_snapshot.py compares against:
    {sample: {view file: sha256}} for every sample (no --extra inputs)."""
    doc = {label: digests(label, path, use_cache=use_cache) for label, path in _inputs(samples, [])}
    out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return sum(map(len, doc.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder of snapshots (or the --digest file)")
    parser.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES)
    parser.add_argument("--extra", type=Path, nargs="*", default=[])
    parser.add_argument("--no-cache", action="store_true", help="parse, never read the cache")
    parser.add_argument(
        "--digest", action="store_true", help="write OUT as one JSON of sha256 per view instead"
    )
    args = parser.parse_args(argv)
    if not args.samples.is_dir():
        print(f"no samples folder at {args.samples}", file=sys.stderr)
        return 2
    if args.digest:
        count = write_digest(args.samples, args.out, use_cache=not args.no_cache)
        print(f"wrote {count} view digests to {args.out}")
        return 0
    total = 0
    for label, path in _inputs(args.samples, args.extra):
        total += snapshot_one(label, path, args.out, use_cache=not args.no_cache)
    print(f"wrote {total} view snapshots under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
