"""The compiled codecs' own checks of their arguments: whatever they are given, they refuse what
does not hold together rather than read past a buffer. (Collected only where the compiled codecs
are built: see ``conftest.py``.)"""

from typing import Any

import pyarrow as pa
import pytest

from broker_lite.records._native import compiled
from broker_lite.records.arrow.decode import allocate_buffer

COMPILED: Any = compiled()  # collected only where it is built
T0 = 1_700_000_000_000


def test_the_compiled_decoder_refuses_regions_outside_its_buffer() -> None:
    with pytest.raises(ValueError, match="lies outside the buffer"):
        COMPILED.decode_v2(b"\x00" * 10, [(0, 11, 1, 0, 0, 0, 0)], False, allocate_buffer)
    with pytest.raises(ValueError, match="lies outside the buffer"):
        COMPILED.decode_v2(b"\x00" * 10, [(-1, 5, 1, 0, 0, 0, 0)], False, allocate_buffer)
    # a count no section of this size can hold is refused before anything is allocated for it
    assert COMPILED.decode_v2(b"\x00" * 10, [(0, 10, 2**62, 0, 0, 0, 0)], True,
                              allocate_buffer) is None


@pytest.mark.parametrize("key,message", [
    ((None, (pa.array([0, 4], pa.int32())).buffers()[1], b"abc", 0), "outside its data"),
    ((None, pa.array([0], pa.int32()).buffers()[1], b"abc", 0), "shorter than its 1 rows"),
    ((b"", pa.array([0, 1], pa.int32()).buffers()[1], b"abc", 0), "shorter than its 1 rows"),
    ((None, pa.array([0, 1, 2], pa.int32()).buffers()[1], b"abc", -1), "shorter than its"),
])
def test_the_compiled_encoder_refuses_columns_that_do_not_hold_their_rows(key: tuple,
                                                                         message: str) -> None:
    value = (None, pa.array([0, 1], pa.int32()).buffers()[1], b"v", 0)
    timestamps = pa.array([T0], pa.int64()).buffers()[1]
    with pytest.raises(ValueError, match=message):
        COMPILED.encode_v2(1, key, value, timestamps, T0, None)
    with pytest.raises(ValueError, match="fewer than the rows"):
        COMPILED.encode_v2(2, None, value, timestamps, T0, None)
