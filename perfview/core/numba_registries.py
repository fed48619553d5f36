"""numba's array registry, loaded without scipy.linalg (call before numba's first compile or
cache load).

numba imports its array registry on its first compile or cache load, and that imports
scipy.linalg (when scipy is installed) only to choose a BLAS inner product for np.cov and the
like, which nothing in perfview calls; that import alone cost 0.15-0.2 s of every cold start.
Without it numba uses its own inner product loop. Anything that imports scipy.linalg later
still gets it. Every module that makes numba dispatchers calls `load` first.
"""

from __future__ import annotations

import importlib
import sys


def load() -> None:
    """Import numba.np.arraymath now, with scipy.linalg's import failing fast meanwhile."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules["scipy.linalg"] = None  # type: ignore[assignment]  # import fails fast
    try:
        importlib.import_module("numba.np.arraymath")
    finally:
        if sys.modules.get("scipy.linalg", 0) is None:
            del sys.modules["scipy.linalg"]


__all__ = ["load"]
