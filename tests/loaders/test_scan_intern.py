"""The scanner's string tables: word-wise case folding and comparison equal the byte-wise
definitions on every byte value and on random spans."""

from __future__ import annotations

import random

import numpy as np

from perfview.loaders.trace.scan.intern import intern_spans, lower_word
from perfview.loaders.trace.scan.tokens import lower_ascii


def test_lower_word_folds_exactly_a_to_z_in_every_byte_position() -> None:
    for value in range(256):
        for position in range(8):
            word = bytearray(b"xY0_\xc3\x9f-Z")
            word[position] = value
            folded = int(lower_word(np.uint64(int.from_bytes(word, "little"))))
            expected = bytes(lower_ascii(c) for c in word)
            assert folded.to_bytes(8, "little") == expected, (value, position)


def _codes_by_python(spans: list[bytes], lower: bool) -> list[int]:
    seen: dict[bytes, int] = {}
    key = (lambda s: bytes(lower_ascii(c) for c in s)) if lower else (lambda s: s)
    return [seen.setdefault(key(s), len(seen)) for s in spans]


def _letter(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def test_spans_share_a_code_exactly_when_equal_case_folded_or_not() -> None:
    rng = random.Random(7)
    alphabet = b"aAbBzZ09_\xc3\xa9\x80\"'"
    pool = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 23))) for _ in range(300)]
    spans = []
    for _ in range(3000):
        s = rng.choice(pool)
        if rng.random() < 0.5:  # the same text with some letters' case flipped
            s = bytes(c ^ 32 if _letter(c) and rng.random() < 0.5 else c for c in s)
        spans.append(s)
    # the spans laid end to end, the last one ending the buffer (bytes read one by one there)
    buf = np.frombuffer(b"".join(spans), dtype=np.uint8)
    lens = np.array([len(s) for s in spans], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    for lower in (False, True):
        assert intern_spans(buf, starts, lens, lower).tolist() == _codes_by_python(spans, lower)
