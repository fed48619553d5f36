"""Two byte operations numba does not offer, as intrinsics for the compiled scanner.

* `load_u64(arr, i)`: the 8 bytes at arr[i:i + 8] as one little-endian word, in one unaligned
  load, so strings and names are read and compared 8 bytes per step;
* `move_bytes(arr, dst, src, count)`: memmove inside one uint8 array;
* `prefetch(arr, offset)`: a cache prefetch of one element (a hint, see `scan.intern`);
* `trailing_zeros(word)`: numba's count of trailing zero bits (one instruction), as int64.

All are called from `@njit` code only, and check no bounds (the callers do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros
from numba.extending import intrinsic

F = TypeVar("F", bound=Callable[..., Any])
HIGHS = np.uint64(0x8080808080808080)  # the high bit of each byte of a word
LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)  # the other seven bits of each byte


def leaf(fn: F) -> F:
    """`njit` for the scanner's per-token functions: cached on disk, GIL-free, and without
    numba's reference counting (`_nrt=False`).

    They never allocate, and counting would make every call two atomic updates of the file
    buffer's count: one cache line that all scan threads fight over. That cost a single
    thread 25% of its time and held two threads to 1.3x one.
    """
    options: dict[str, Any] = {"cache": True, "nogil": True, "_nrt": False}  # _nrt: not typed
    compiled: F = njit(**options)(fn)
    return compiled


def _load_u64(typingctx, arr, index):  # type: ignore[no-untyped-def]
    """The 8 bytes at arr[index:index + 8] as one (unaligned) little-endian word; the caller
    checks the bounds."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8):
        return None
    if not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        offset = builder.sext(args[1], ir.IntType(64)) if args[1].type.width < 64 else args[1]
        pointer = builder.bitcast(cgutils.gep(builder, data, offset), ir.IntType(64).as_pointer())
        return builder.load(pointer, align=1)

    return types.uint64(arr, index), codegen


def _move_bytes(typingctx, arr, dst, src, count):  # type: ignore[no-untyped-def]
    """memmove(arr + dst, arr + src, count) inside one uint8 array (the spans may overlap);
    the caller checks the bounds. numba's slice assignment copies overlapping views through a
    temporary array, and moves byte by byte."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8):
        return None
    if not all(isinstance(t, types.Integer) for t in (dst, src, count)):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        i64 = ir.IntType(64)
        dst, src, count = (builder.sext(a, i64) if a.type.width < 64 else a for a in args[1:])
        cgutils.raw_memmove(
            builder, cgutils.gep(builder, data, dst), cgutils.gep(builder, data, src), count, 1
        )
        return context.get_dummy_value()

    return types.none(arr, dst, src, count), codegen


def _prefetch(typingctx, arr, offset):  # type: ignore[no-untyped-def]
    """Prefetch the cache line of arr's element at flat `offset` (C order) for reading: a hint,
    harmless out of bounds (the caller keeps it in bounds anyway)."""
    if not isinstance(arr, types.Array) or not isinstance(offset, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        i64, i32 = ir.IntType(64), ir.IntType(32)
        index = builder.sext(args[1], i64) if args[1].type.width < 64 else args[1]
        pointer = builder.bitcast(cgutils.gep(builder, data, index), ir.IntType(8).as_pointer())
        fn = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32]),
            "llvm.prefetch.p0i8",
        )
        builder.call(fn, [pointer, i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.none(arr, offset), codegen


load_u64: Any = intrinsic(_load_u64)
prefetch: Any = intrinsic(_prefetch)
_TRAILING_ZEROS: Any = _trailing_zeros  # an intrinsic: its typing stub shows the codegen's args


@njit(cache=True, nogil=True, inline="always")
def trailing_zeros(w: np.uint64) -> int:
    """Count of trailing zero bits of `w` (one instruction), as int64: numba keeps int() of a
    uint64 unsigned, and int64 + uint64 is float64 there."""
    return np.int64(_TRAILING_ZEROS(w))  # type: ignore[return-value]


move_bytes: Any = intrinsic(_move_bytes)

__all__ = ["leaf", "load_u64", "move_bytes", "prefetch", "trailing_zeros"]
