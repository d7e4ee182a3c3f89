"""Reading topics from the command line: which partitions, where to start, and fetch rounds.

A :class:`TopicReader` is the client's partition reader
(:class:`broker_lite.client.PartitionReader`: one Fetch per leader broker per round, long
polls, CRCs checked unless ``check.crcs=false``, control batches and, under
``read_committed``, aborted transactions left out) over every partition of the topics, whose
positions the log no longer holds (retention, truncation) are reset to the earliest or latest
offset, as ``auto.offset.reset`` says.
"""

from collections.abc import Iterable, Mapping

from broker_lite.client import (
    KafkaClient,
    OutOfRange,
    PartitionReader,
    TopicPartition,
    UnknownTopicOrPartitionError,
)

from .common import ToolError

RESET_POLICIES = ("earliest", "latest", "none")  # the values of auto.offset.reset


def topic_partitions(client: KafkaClient, topics: Iterable[str],
                     partition: int | None = None) -> list[TopicPartition]:
    """The partitions of ``topics`` (only ``partition`` when given); a topic or partition that
    does not exist is a :class:`ToolError` naming it."""
    result = []
    for topic in topics:
        try:
            partitions = client.partitions(topic)
        except UnknownTopicOrPartitionError:
            raise ToolError(f"topic {topic} does not exist") from None
        if partition is not None:
            if partition not in partitions:
                raise ToolError(f"topic {topic} has no partition {partition} (it has "
                                f"{len(partitions)})")
            partitions = [partition]
        result.extend(TopicPartition(topic, p) for p in partitions)
    return result


def start_positions(client: KafkaClient, tps: list[TopicPartition], default: int, *,
                    explicit: int | None = None, group: str | None = None,
                    isolation_level: str) -> dict[TopicPartition, int]:
    """Where each partition starts: ``explicit`` (an offset, or EARLIEST / LATEST) when given,
    else the offset ``group`` committed, else ``default`` (EARLIEST or LATEST)."""
    if explicit is not None and explicit >= 0:
        return dict.fromkeys(tps, explicit)
    positions: dict[TopicPartition, int] = {}
    if explicit is None and group is not None:
        committed = client.committed(group, tps)
        positions = {tp: offset for tp, offset in committed.items() if offset is not None}
    spec = default if explicit is None else explicit
    missing = {tp: spec for tp in tps if tp not in positions}
    if missing:
        found = client.list_offsets(missing, isolation_level)
        positions.update({tp: found[tp] if found[tp] is not None else 0 for tp in missing})
    return {tp: positions[tp] for tp in tps}


class TopicReader(PartitionReader):
    """Reads ``positions`` forward; :meth:`poll` returns the chunks of one round (see
    :class:`broker_lite.client.FetchedChunk`: ``tp``, ``records()``, ``to_arrow()``,
    ``next_position``)."""

    def __init__(self, client: KafkaClient, positions: Mapping[TopicPartition, int], *,
                 isolation_level: str, reset: str = "latest"):
        if reset not in RESET_POLICIES:
            raise ToolError(f"auto.offset.reset must be one of {', '.join(RESET_POLICIES)}, "
                            f"got {reset!r}")
        self.reset = reset
        super().__init__(client, positions, isolation_level=isolation_level,
                         on_out_of_range=self._reset)

    def _reset(self, gone: OutOfRange) -> int:
        if self.reset == "none":
            raise ToolError(f"offset {gone.position} is out of range for {gone.tp} and "
                            "auto.offset.reset is none")
        return gone.log_start if self.reset == "earliest" else gone.log_end
