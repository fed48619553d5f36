"""A faster answer to PySide's "does this module use PySide?" question, asked once per import.

PySide6 (6.4+) hooks `__import__` for its `__feature__` switches (`snake_case`,
`true_property`) and, for every module imported after it, records whether the module's
source mentions "PySide6" (`shibokensupport.feature._mod_uses_pyside`, which calls
`inspect.getsource`: it reads the file through `linecache`, splits it into lines, keeps them
in memory and joins them again). Starting the window imports ~750 modules after Qt (pandas,
pyqtgraph, perfview): 0.2-0.26 s of the ~1 s to the first page went there. `install` replaces
the check with one that reads the file's bytes and looks for the same word, with the same
answer for every module whose source is a file (others still go to PySide's check); ~5× faster and
nothing stays in `linecache`. perfview uses no `__feature__` switch itself; when PySide lacks
the function (another version), nothing is replaced.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

_MARK = b"PySide6"


def uses_pyside(module: ModuleType) -> bool:
    """True when the module's source file contains "PySide6" (what PySide's check returns)."""
    path = getattr(module, "__file__", None)
    if isinstance(path, str) and path.endswith(".py"):
        try:
            with open(path, "rb") as fh:
                return _MARK in fh.read()
        except OSError:
            pass  # in a zip, say: PySide's own check asks the module's loader
    return bool(_original(module)) if _original is not None else False


_original: Callable[[ModuleType], bool] | None = None


def install() -> bool:
    """Replace PySide's check with `uses_pyside`; False when this PySide has none."""
    global _original
    feature = sys.modules.get("shibokensupport.feature")
    check = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or check is None or check is uses_pyside:
        return False
    _original = check
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]
    return True


__all__ = ["install", "uses_pyside"]
