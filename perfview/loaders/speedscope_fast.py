"""Reading big speedscope files without a Python list per sample.

A 100 MB py-spy file holds about a million samples of ~15 frame indices: decoded as JSON that
is a million lists and fifteen million ints, most of the load time. Here msgspec decodes the
document with each profile's `samples` and `weights` left as raw JSON (`msgspec.Raw`), and
the samples text is split into per-sample byte slices with numpy (every inner array is flat,
so its brackets alternate). Identical samples share a slice text, so one dict groups them
and only the distinct stacks are decoded. Anything unusual (nesting, floats, negative
numbers) returns None and the loader decodes that profile the ordinary way.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import msgspec
import numpy as np

from perfview.core.model.errors import LoadError

# Bytes a flat samples array of non-negative ints may hold.
_ALLOWED = np.zeros(256, dtype=bool)
_ALLOWED[np.frombuffer(b"0123456789,[] \t\r\n", dtype=np.uint8)] = True


class _Profile(msgspec.Struct):
    """A profile with the big arrays kept as raw JSON; the rest is checked by the loader."""

    type: Any = None
    name: Any = None
    unit: Any = "none"
    startValue: Any = 0
    endValue: Any = 0
    samples: msgspec.Raw = msgspec.Raw()  # empty: the field was absent
    weights: msgspec.Raw = msgspec.Raw()
    events: Any = None


class _Document(msgspec.Struct):
    shared: Any = None
    profiles: list[_Profile] | None = None


def decode(raw: bytes) -> Any:
    """The document as dicts, samples/weights as `msgspec.Raw` when the shape allows it.

    Raises msgspec.DecodeError for text that is not JSON; a document whose shape does not
    fit the typed decode is decoded plainly (the loader then says what is wrong with it).
    """
    try:
        doc = msgspec.json.decode(raw, type=_Document)
    except msgspec.ValidationError:
        return msgspec.json.decode(raw)
    if doc.profiles is None:
        return msgspec.json.decode(raw)
    profiles = [{f: getattr(p, f) for f in p.__struct_fields__ if _given(getattr(p, f))}
                for p in doc.profiles]  # fmt: skip
    return {"shared": doc.shared, "profiles": profiles}


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, msgspec.Raw) and len(value) == 0)


def plain(value: Any) -> Any:
    """A raw JSON field decoded the ordinary way (other values unchanged); LoadError for
    numbers msgspec cannot hold."""
    if isinstance(value, msgspec.Raw):
        try:
            return msgspec.json.decode(value)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError) as exc:
            raise LoadError(f"it is a speedscope file with a value it cannot read ({exc})") from exc
    return value


def _only_separators(arr: np.ndarray, after: np.ndarray, before: np.ndarray) -> bool:
    """True when every gap (after[i], before[i]) holds only commas and whitespace."""
    lengths = before - after - 1
    if not len(lengths) or lengths.max(initial=0) <= 0:
        return True
    starts = np.repeat(after + 1, lengths)
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    gap = arr[starts + offsets]
    return bool(np.isin(gap, np.frombuffer(b", \t\r\n", dtype=np.uint8)).all())


def stack_codes(raw: msgspec.Raw) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(frames of the distinct stacks, their lengths, stack code of every sample) of a flat
    `[[i,…],…]` text, or None when it has another shape.

    Grouping is by the samples' text with a dict: measured against a numpy hash-and-verify
    grouping, the dict was five times faster (a bytes hash is cheap, numpy passes are not).
    """
    arr = np.frombuffer(bytes(raw), dtype=np.uint8)
    if not len(arr) or not _ALLOWED[arr].all():
        return None
    opens = np.flatnonzero(arr == ord("["))
    closes = np.flatnonzero(arr == ord("]"))
    if len(opens) != len(closes) or not len(opens):
        return None
    inner_o, inner_c = opens[1:], closes[:-1]
    outer_ok = opens[0] < (inner_o[0] if len(inner_o) else closes[-1]) and (
        not len(inner_c) or inner_c[-1] < closes[-1]
    )
    if not outer_ok or not np.all(inner_o < inner_c) or not np.all(inner_c[:-1] < inner_o[1:]):
        return None  # nested deeper than samples ever are
    if not _only_separators(
        arr, np.concatenate(([opens[0]], inner_c)), np.append(inner_o, closes[-1])
    ):
        return None  # a number outside the inner arrays
    data = bytes(raw)
    index: dict[bytes, int] = {}
    codes = np.fromiter(
        (
            index.setdefault(data[a : b + 1], len(index))
            for a, b in zip(inner_o.tolist(), inner_c.tolist(), strict=True)
        ),
        dtype=np.int64,
        count=len(inner_o),
    )
    try:  # only the distinct stacks become Python lists
        stacks = msgspec.json.decode(b"[" + b",".join(index) + b"]", type=list[list[int]])
    except (msgspec.DecodeError, msgspec.ValidationError):  # "[1,,2]", 2**70: reported later
        return None
    lengths = np.fromiter(map(len, stacks), np.int64, len(stacks))
    try:
        flat = np.fromiter(chain.from_iterable(stacks), np.int64, int(lengths.sum()))
    except OverflowError:
        return None
    return flat, lengths, codes


__all__ = ["decode", "plain", "stack_codes"]
