"""Unpickling as data only: the restricted unpickler every pickle perfview opens goes through.

A pickle can name any importable callable and have it called while loading ("GLOBAL" +
"REDUCE"): opening a colleague's snapshot with `pickle.load` can run any code. `_DataOnly`'s
`find_class` refuses every global, so only the opcodes that build containers, numbers,
strings and bytes can do anything. What those opcodes would make the unpickler allocate or
compute beyond the file's size (a memo index of billions, a tuple key nested through shared
references) is refused first, by one pass over the opcodes (`pickle_check`). The compiled
walker (`pickle_walk`) refuses imports with the same sentence (`REFUSED`).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from perfview.core.model.errors import LoadError
from perfview.loaders.cuda_snapshot import pickle_check

REFUSED = (
    "it is a pickle that asks to import {what}; perfview reads CUDA memory snapshots as data "
    "only and never runs code from a file"
)


class _DataOnly(pickle.Unpickler):
    """An unpickler that builds plain data and refuses every global (class, function)."""

    def find_class(self, module: str, name: str) -> Any:
        raise LoadError(REFUSED.format(what=f"{module}.{name}"[:80]))

    def persistent_load(self, pid: Any) -> Any:
        raise LoadError(REFUSED.format(what="a persistent object"))


def restricted_loads(data: bytes) -> Any:
    """Unpickle `data` as plain data only; LoadError for globals, a damaged stream, or work
    beyond what the file's size pays for (`pickle_check`: memo indices, hashing)."""
    try:
        pickle_check.check(data)
    except pickle_check.Beyond as beyond:
        _stops_before(data[: beyond.pos])
        raise
    try:
        return _DataOnly(io.BytesIO(data)).load()
    except LoadError:
        raise
    except MemoryError as exc:
        raise LoadError("it does not fit in memory") from exc
    except Exception as exc:  # nothing here can run code: any other failure is a damaged stream
        raise LoadError(f"the pickle is damaged or truncated ({type(exc).__name__})") from exc


def _stops_before(head: bytes) -> None:
    """The unpickler's own sentence where it stops inside `head` (the bytes before what the
    pass refused, which it checked: safe to unpickle) for a reason other than running out
    of bytes: it checks more than the pass, and the walker says what it says."""
    try:
        _DataOnly(io.BytesIO(head)).load()
    except LoadError:
        raise
    except EOFError:
        return
    except pickle.UnpicklingError as exc:
        if "truncated" not in str(exc):
            raise LoadError(f"the pickle is damaged or truncated ({type(exc).__name__})") from exc
    except Exception as exc:
        raise LoadError(f"the pickle is damaged or truncated ({type(exc).__name__})") from exc
