"""The offsets cache of one group: the commit written last to the log wins, removal reports what
was there, and expiry skips the topics a group keeps."""

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.group.offsets import (
    CommittedOffset,
    GroupOffsets,
    OffsetAndMetadata,
)

TP = TopicPartition("events", 0)


def commit(record_offset: int, offset: int, commit_ms: int = 0) -> CommittedOffset:
    return CommittedOffset(record_offset, OffsetAndMetadata(offset, -1, "", commit_ms))


def test_the_commit_written_last_wins_whatever_the_arrival_order():
    offsets = GroupOffsets()
    offsets.on_append(TP, commit(record_offset=10, offset=5))
    offsets.on_append(TP, commit(record_offset=4, offset=1))  # an older record arriving late
    assert offsets.get(TP).offset == 5
    offsets.on_append(TP, commit(record_offset=11, offset=6))
    assert offsets.get(TP).offset == 6 and len(offsets) == 1


def test_remove_reports_what_was_there():
    other = TopicPartition("events", 1)
    offsets = GroupOffsets({TP: commit(0, 3)})
    assert offsets.remove([TP, other]) == {TP: OffsetAndMetadata(3, -1, "", 0)}
    assert offsets.get(TP) is None and offsets.remove_all() == {}


def test_expired_keeps_topics_asked_for_and_recent_commits():
    kept_topic = TopicPartition("kept", 0)
    recent = TopicPartition("recent", 0)
    offsets = GroupOffsets({TP: commit(0, 1, commit_ms=0), kept_topic: commit(1, 1, commit_ms=0),
                            recent: commit(2, 1, commit_ms=900)})
    expired = offsets.expired(1000, 1000, lambda v: v.commit_timestamp,
                              keep_topics=frozenset({"kept"}))
    assert expired == [TP]
