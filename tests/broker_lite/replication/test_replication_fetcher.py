"""Where a follower truncates (Kafka's getOffsetTruncationState, KIP-101/279), as a table of the
follower's epochs and log end against the leader's OffsetForLeaderEpoch answer; and the whole
batches a fetch brought."""

import pytest

from broker_lite.log.leader_epochs import LeaderEpochCache
from broker_lite.records import build_batch
from broker_lite.replication.fetcher import truncation_point, whole_batches


@pytest.fixture
def epochs(tmp_path):
    cache = LeaderEpochCache(tmp_path)
    for epoch, start in ((0, 0), (2, 100), (4, 150)):
        cache.assign(epoch, start)
    return cache


@pytest.mark.parametrize("log_end,high_watermark,leader_epoch,leader_end,expected", [
    (180, 90, 4, 170, (170, True)),   # both know epoch 4: the shorter end
    (180, 90, 4, 200, (180, True)),   # the leader has more of it: keep everything
    (180, 90, 3, 120, (150, False)),  # epoch 3 is the leader's only: cut at our epoch 2's end
    (150, 90, 2, 120, (120, True)),   # ... and, asked again, at the leader's end of epoch 2
    (180, 90, 0, 50, (50, True)),     # the epochs diverged right after epoch 0
    (180, 90, -1, 120, (120, True)),  # a leader without epochs in its answer
    (180, 90, 2, -1, (90, True)),     # no end offset known: the high watermark (Kafka's fallback)
])
def test_truncation_point(epochs, log_end, high_watermark, leader_epoch, leader_end, expected):
    assert truncation_point(epochs, log_end, high_watermark, leader_epoch,
                            leader_end) == expected


def test_epochs_older_or_newer_than_all_of_ours(tmp_path):
    cache = LeaderEpochCache(tmp_path)
    cache.assign(5, 10)
    # an older epoch ends, for us, where our first one starts (Kafka's endOffsetFor)
    assert truncation_point(cache, 40, 5, 3, 25) == (10, True)
    # an epoch newer than all of ours: the leader's end of it
    assert truncation_point(cache, 40, 5, 7, 25) == (25, True)


def test_a_fetch_ending_in_part_of_a_batch_keeps_the_whole_ones():
    data = build_batch([(b"k", b"v")], timestamp=1) + build_batch([(b"k", b"w")], timestamp=2)
    first = len(build_batch([(b"k", b"v")], timestamp=1))
    assert bytes(whole_batches(data[:-3])) == data[:first]
    assert bytes(whole_batches(data)) == data
    assert bytes(whole_batches(b"")) == b""
