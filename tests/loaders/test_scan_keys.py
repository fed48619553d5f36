"""The scanner's key tables: every word of every table found, anything else not."""

from __future__ import annotations

import numpy as np
import pytest

from perfview.loaders.trace import fields
from perfview.loaders.trace.scan.keys import key_table, match_key, table_words


@pytest.mark.parametrize("table", [fields.EVENT, fields.KINETO_ARGS, fields.MEMORY_ARGS])
def test_each_word_and_only_the_words_match(table: tuple[fields.Field, ...]) -> None:
    words = [f.key for f in table]
    keys = key_table(words)
    assert table_words(keys) == words
    near = [w[:-1] for w in words] + [w + "x" for w in words] + [w.upper() for w in words]
    probes = words + near + ["", "Ph", "External Id", "Input dimS", "args ", "x" * 17, "id3"]
    for probe in probes:
        expected = words.index(probe) if probe in words else -1
        # the key at the very end of the buffer (bytes read one by one) and inside it
        for tail in (b"", b'":1,', b'"' + b"y" * 20):
            buf = np.frombuffer(b'"' + probe.encode() + tail, dtype=np.uint8)
            assert match_key(buf, 1, len(probe), len(buf), keys) == expected, (probe, tail)


def test_words_outside_one_to_sixteen_bytes_are_refused() -> None:
    with pytest.raises(ValueError, match="1-16 bytes"):
        key_table(["a" * 17])
