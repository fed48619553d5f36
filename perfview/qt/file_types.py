"""The files the window offers to open: the file-dialog filters (one per loader) and the
bundled example. Its own module so dialogs (File ▸ Open, Compare) share it without importing
the main window."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

EXAMPLE = ("resources", "examples", "example.prof")


def example_path() -> Path:
    """The bundled example profile (package data, so it exists in installed wheels too)."""
    return Path(str(resources.files("perfview").joinpath(*EXAMPLE)))


def name_filters() -> list[str]:
    """File-dialog filters: all supported files, one per loader, then All files."""
    filters: list[str] = []
    patterns: list[str] = []
    from perfview.loaders import LOADERS

    for loader in LOADERS:
        globs = " ".join(f"*{ext}" for ext in loader.EXTENSIONS)
        if globs:
            patterns.extend(f"*{ext}" for ext in loader.EXTENSIONS)
            filters.append(f"{str(loader.DESCRIPTION).capitalize()} ({globs})")
    unique = " ".join(dict.fromkeys(patterns))
    if unique:
        filters.insert(0, f"All supported files ({unique})")
    filters.append("All files (*)")
    return filters


__all__ = ["EXAMPLE", "example_path", "name_filters"]
