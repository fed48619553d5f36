"""The README, the docs and pyproject.toml point only at things that exist.

A link to a moved doc or script rots silently: a reader clicks it and lands nowhere. Every
relative link and image in README.md and docs/*.md must name a file of the repository (and,
for `file.md#anchor`, a heading of that file), and every path pyproject.toml mentions (in its
settings or its comments) must exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _anchors(md: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", md.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#+\s+(.+?)\s*$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def _links(md: Path) -> list[str]:
    text = FENCE.sub("", md.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("md", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(md: Path) -> None:
    broken = []
    for target in _links(md):
        path, _, anchor = target.partition("#")
        dest = (md.parent / path).resolve() if path else md
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in _anchors(dest)):
            broken.append(target)
    assert broken == []


def test_the_docs_have_links_to_check() -> None:
    """Guards the test above against a pattern that finds nothing."""
    assert len(_links(ROOT / "README.md")) >= 10


def test_every_path_pyproject_mentions_exists() -> None:
    """Paths are taken relative to the repository or, as package data and the comments'
    `loaders/…` are, to the package; a glob must match at least one file."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bases = (ROOT, ROOT / "perfview")
    folders = {p.name for base in bases for p in base.iterdir() if p.is_dir()}
    missing = []
    for token in sorted({t.rstrip(".") for t in re.findall(r"[\w.-]+(?:/[\w.*-]*)*", text)}):
        named_file = re.search(r"\.(md|py|sh|toml|json|txt|bin|svg)$", token) is not None
        if not (named_file or (("/" in token) and token.split("/")[0] in folders)):
            continue  # a word ("GB/s", "Linux/macOS"), not a path
        if not any(list(base.glob(token.rstrip("/"))) for base in bases):
            missing.append(token)
    assert missing == []
    assert "README.md" in text  # the pattern does see paths
