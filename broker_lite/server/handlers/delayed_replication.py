"""Requests answered once their appends are replicated: the high watermark of each partition
appended to reaches the offset after the append (Kafka's acks=all, as its DelayedProduce
waits). Such a request waits in the purgatory's Produce part, watched under those partitions,
which are checked again whenever they are appended to or their high watermark moves; it holds
no request handler meanwhile."""

from collections.abc import Hashable
from typing import Generic, TypeVar

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ErrorCode

from ..dispatcher import RESPONDS_LATER, DelayedResponse, RequestContext

K = TypeVar("K", bound=Hashable)  # what names an append: a subclass's choice


class DelayedReplication(DelayedResponse, Generic[K]):
    """Waits until every ``required`` append (key -> (partition, offset the high watermark
    must reach)) is replicated, or ``timeout_ms`` passed; :meth:`replicated` is told of each
    as it completes, and :meth:`response` gives the answer (the keys still in ``pending``
    timed out)."""

    def __init__(self, context: RequestContext, timeout_ms: int,
                 required: dict[K, tuple[TopicPartition, int]]):
        super().__init__(context, max(timeout_ms, 0))
        self.pending = dict(required)

    def wait(self) -> object:
        """Watch this operation (or complete it now); what the handler returns."""
        partitions = sorted({tp for tp, _ in self.pending.values()})
        self.context.services.purgatory.produce.try_complete_else_watch(self, partitions)
        return RESPONDS_LATER

    def try_complete(self) -> bool:
        partitions = self.context.services.partitions
        for key, (partition, offset) in list(self.pending.items()):
            replica = partitions.partition(partition)
            done, error = (True, ErrorCode.NOT_LEADER_OR_FOLLOWER) if replica is None \
                else replica.check_enough_replicas_reach_offset(offset)
            self.replicated(key, done, error)
            if done:
                del self.pending[key]
        return not self.pending and self.force_complete()

    def replicated(self, key: K, done: bool, error: ErrorCode) -> None:
        """What a check found of ``key``'s append: ``done`` (with ``error``: NONE, or
        NOT_LEADER_OR_FOLLOWER once leadership moved, NOT_ENOUGH_REPLICAS_AFTER_APPEND once
        the ISR shrank below ``min.insync.replicas``), or still waiting."""
        raise NotImplementedError
