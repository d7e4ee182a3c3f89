"""Replica assignment of new partitions, Kafka's rack-unaware round robin (``AdminUtils``).

Brokers are taken in id order. Partition ``p``'s first replica (its preferred leader) is broker
``(p + start_index) % n``; the other replicas follow it at a shift that grows by one every ``n``
partitions, so followers of consecutive leaders spread too::

    shift(j) = 1 + (replica_shift + j) % (n - 1)        for the j-th follower, j = 0 .. rf - 2
    follower(j) = (first + shift(j)) % n

``start_index`` (and the initial ``replica_shift``) are random unless fixed, as in Kafka, so
that many small topics do not all lead on the first broker.

>>> assign_replicas([1, 2, 3], partitions=4, replication_factor=2, start_index=0)
{0: (1, 2), 1: (2, 3), 2: (3, 1), 3: (1, 3)}
"""

import random
from collections.abc import Iterable

from .errors import InvalidPartitionsError, InvalidReplicationFactorError


def assign_replicas(broker_ids: Iterable[int], partitions: int, replication_factor: int, *,
                    start_index: int = -1, start_partition: int = 0,
                    rng: random.Random | None = None) -> dict[int, tuple[int, ...]]:
    """Replicas of partitions ``start_partition .. start_partition + partitions - 1``."""
    brokers = sorted(set(broker_ids))
    if partitions <= 0:
        raise InvalidPartitionsError(
            f"number of partitions must be larger than 0, got {partitions}")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"replication factor must be larger than 0, got {replication_factor}")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"replication factor {replication_factor} is larger than the {len(brokers)} live "
            f"broker(s) {brokers}")
    n = len(brokers)
    rng = rng or random.Random()
    first_index = start_index if start_index >= 0 else rng.randrange(n)
    replica_shift = start_index if start_index >= 0 else rng.randrange(n)
    result = {}
    for partition in range(start_partition, start_partition + partitions):
        if partition > 0 and partition % n == 0:
            replica_shift += 1
        first = (partition + first_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            shift = 1 + (replica_shift + j) % (n - 1)
            replicas.append(brokers[(first + shift) % n])
        result[partition] = tuple(replicas)
    return result
