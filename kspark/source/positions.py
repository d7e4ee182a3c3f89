"""Positions in topics: the offsets of a stream as Spark checkpoints them, and resolving the
starting and ending positions of the options to offsets.

A stream offset is Spark's Kafka source JSON, the next offset to read per partition::

    {"events": {"0": 42, "1": 17}}

kept with sorted keys so equal positions serialize identically.
"""

import logging
from collections.abc import Iterable, Mapping

from broker_lite.client import EARLIEST, LATEST, KafkaClient, TopicPartition
from kspark.options import OptionError

from .options import OffsetSpec

logger = logging.getLogger(__name__)


class OffsetResolutionError(ValueError):
    """A starting or ending position cannot be turned into offsets."""


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Partition offsets as a stream offset.

    >>> to_json({TopicPartition("t", 1): 5, TopicPartition("t", 0): 7})
    {'t': {'0': 7, '1': 5}}
    """
    result: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        result.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return result


def from_json(offset: Mapping[str, Mapping[str, int]] | None) -> dict[TopicPartition, int]:
    """A stream offset as partition offsets.

    >>> from_json({"t": {"0": 7}})
    {TopicPartition(topic='t', partition=0): 7}
    """
    return {TopicPartition(topic, int(p)): int(o)
            for topic, partitions in (offset or {}).items() for p, o in partitions.items()}


def resolve(client: KafkaClient, spec: OffsetSpec, partitions: Iterable[TopicPartition], *,
            isolation_level: str, group_id: str | None = None) -> dict[TopicPartition, int]:
    """The offset of every partition in ``partitions`` for the position ``spec``."""
    partitions = sorted(partitions)
    if spec.kind in ("earliest", "latest"):
        which = EARLIEST if spec.kind == "earliest" else LATEST
        return _listed(client, {tp: which for tp in partitions}, isolation_level)
    if spec.kind == "offsets":
        missing = sorted(set(partitions) - set(spec.offsets))
        extra = sorted(set(spec.offsets) - set(partitions))
        if missing or extra:
            raise OptionError(spec.option, "must give every partition read and only those "
                                           "(-2 for earliest, -1 for latest); "
                              + (f"missing {_names(missing)}" if missing else "")
                              + ("; " if missing and extra else "")
                              + (f"not read {_names(extra)}" if extra else ""))
        return _listed(client, dict(spec.offsets), isolation_level)
    if spec.kind in ("timestamp", "timestamps"):
        return _by_timestamp(client, spec, partitions, isolation_level)
    if spec.kind == "group":
        return _committed(client, spec, partitions, group_id, isolation_level)
    raise ValueError(f"unknown position kind {spec.kind!r}")


def _listed(client: KafkaClient, specs: dict[TopicPartition, int],
            isolation_level: str) -> dict[TopicPartition, int]:
    """Offsets as given, with earliest (-2) and latest (-1) looked up."""
    lookups = {tp: o for tp, o in specs.items() if o in (EARLIEST, LATEST)}
    found = client.list_offsets(lookups, isolation_level=isolation_level) if lookups else {}
    return {tp: (found[tp] if tp in lookups else offset) for tp, offset in specs.items()}


def _by_timestamp(client, spec: OffsetSpec, partitions, isolation_level):
    if spec.kind == "timestamp":
        timestamps = {tp: spec.timestamp for tp in partitions}
    else:
        missing = sorted(set(partitions) - set(spec.offsets))
        if missing:
            raise OptionError(spec.option, f"no timestamp for {_names(missing)}; give every "
                                           "partition read")
        timestamps = {tp: spec.offsets[tp] for tp in partitions}
    found = client.list_offsets(timestamps, isolation_level=isolation_level)
    unmatched = sorted(tp for tp in partitions if found.get(tp) is None)
    if unmatched and spec.option.startswith("starting") and spec.strategy == "error":
        raise OffsetResolutionError(
            f"{spec.option}: no record at or after the timestamp in {_names(unmatched)}; set "
            "startingOffsetsByTimestampStrategy=latest to start those at the latest offset")
    latest = _listed(client, {tp: LATEST for tp in unmatched}, isolation_level)
    return {tp: (latest[tp] if tp in latest else found[tp]) for tp in partitions}


def _committed(client, spec: OffsetSpec, partitions, group_id, isolation_level):
    committed = client.committed(group_id, list(partitions))
    without = sorted(tp for tp in partitions if committed.get(tp) is None)
    if without and spec.fallback == "error":
        raise OffsetResolutionError(
            f"group {group_id!r} has no committed offset for {_names(without)} and "
            "startingOffsets.fallback is 'error'")
    if without:
        logger.info("group %s has no committed offset for %s: starting them at %s", group_id,
                    _names(without), spec.fallback)
    which = EARLIEST if spec.fallback == "earliest" else LATEST
    fallback = _listed(client, {tp: which for tp in without}, isolation_level)
    return {tp: (fallback[tp] if tp in fallback else committed[tp]) for tp in partitions}


def _names(partitions: Iterable[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions)
