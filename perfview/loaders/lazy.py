"""A package's names imported from one of its modules on first use (PEP 562).

A format package (`trace`, `memray`, `cuda_snapshot`) is its loader module, but its stage
modules must import without the loader's own imports: `perfview summary BIG.json` starts the
trace scanner on a thread before pandas is loaded (`cli._scan_ahead`), and registering the
loaders must not load numba. So each package's `__init__` names its loader's exports and
gets them through `exports`. Standard library only.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from typing import Any


def exports(package: str, home: str, names: Iterable[str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: the first time one of `names` is asked for,
    import module `home` and keep the value in the package (later lookups are plain)."""
    known = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in known:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
