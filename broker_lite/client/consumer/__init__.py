"""Consuming: :mod:`.fetcher` (Fetch), :mod:`.aborted` (leaving aborted transactions out),
:mod:`.partition_reader` (reading partitions forward from positions: the one read loop),
:mod:`.offsets` (ListOffsets) and :mod:`.group_offsets` (OffsetCommit and OffsetFetch)."""
