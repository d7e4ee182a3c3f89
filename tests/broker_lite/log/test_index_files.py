"""Index files on disk as another process sees them: every appended entry is in the file at
once, whole, as with Kafka's memory-mapped indexes (``broker-lite dump-log`` reads a live
broker's indexes)."""

from broker_lite.log.offset_index import OffsetIndex
from broker_lite.log.time_index import TimeIndex


def test_offset_index_entries_reach_the_file_as_they_are_appended(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000100.index", 100, 1024)
    try:
        for i, (offset, position) in enumerate([(100, 0), (150, 4096), (220, 8200)], start=1):
            index.append(offset, position)
            raw = index.path.read_bytes()  # a separate reader, the index still open for writing
            assert len(raw) == i * OffsetIndex.ENTRY.size
            assert OffsetIndex.ENTRY.unpack_from(raw, (i - 1) * OffsetIndex.ENTRY.size) == (
                offset - 100, position)
    finally:
        index.close()


def test_time_index_entries_reach_the_file_as_they_are_appended(tmp_path):
    index = TimeIndex(tmp_path / "00000000000000000000.timeindex", 0, 1024)
    try:
        index.maybe_append(1_700_000_000_000, 7)
        assert TimeIndex.ENTRY.unpack(index.path.read_bytes()) == (1_700_000_000_000, 7)
    finally:
        index.close()
