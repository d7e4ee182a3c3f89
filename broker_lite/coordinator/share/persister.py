"""How a share-partition leader reads and writes its share-partitions' state: through the share
coordinator's state APIs (Kafka's ``DefaultStatePersister``), wherever that coordinator is.

The share coordinator of a share-partition is the leader of the partition of
``__share_group_state`` its key hashes to. When that is this broker the call goes straight to
its :class:`.coordinator.ShareCoordinator`; otherwise the request (ReadShareGroupState,
WriteShareGroupState, InitializeShareGroupState, DeleteShareGroupState,
ReadShareGroupStateSummary) goes to that broker over a :class:`..common.broker_channel.
BrokerChannel`. The retriable answers (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
COORDINATOR_NOT_AVAILABLE: the topic being created, its leader moving) are retried with a short
backoff within ``timeout_ms``; what is left is the answer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from broker_lite.protocol import ApiKey, ErrorCode

from ..common.broker_channel import BrokerChannel
from .coordinator import ShareCoordinator
from .records import StateKey
from .share_partition import StateBatch
from .state import UNINITIALIZED

logger = logging.getLogger(__name__)

RETRIABLE = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                       ErrorCode.COORDINATOR_NOT_AVAILABLE})


@dataclass(frozen=True)
class ReadResult:
    error: ErrorCode
    state_epoch: int = 0
    start_offset: int = UNINITIALIZED
    batches: tuple[StateBatch, ...] = ()
    leader_epoch: int = -1


class StatePersister:
    """The state APIs as a share-partition leader calls them.

    Parameters
    ----------
    coordinator : ShareCoordinator
        This broker's share coordinator.
    broker_id : callable
        This broker's id.
    leader_of : callable
        ``leader_of(partition)``: the leader of a partition of ``__share_group_state``, -1
        without one, None while the topic does not exist.
    address_of : callable
        ``address_of(broker_id) -> (host, port) | None`` on the inter-broker listener.
    security : mapping, optional
        The inter-broker listener's client settings.
    """

    def __init__(self, coordinator: ShareCoordinator, broker_id: Callable[[], int],
                 leader_of: Callable[[int], int | None],
                 address_of: Callable[[int], tuple[str, int] | None], *,
                 security: Mapping[str, str] | None = None, timeout_ms: int = 10_000):
        self.coordinator = coordinator
        self.broker_id = broker_id
        self.leader_of = leader_of
        self.address_of = address_of
        self.security = security
        self.timeout_ms = timeout_ms
        self._channels: dict[int, BrokerChannel] = {}
        self._channels_lock = threading.RLock()

    def close(self) -> None:
        with self._channels_lock:
            for channel in self._channels.values():
                channel.close()
            self._channels.clear()

    # -- the state APIs ----------------------------------------------------------------------

    def read(self, key: StateKey, leader_epoch: int) -> ReadResult:
        def local() -> ReadResult:
            error, state = self.coordinator.read(key, leader_epoch)
            if error or state is None:
                return ReadResult(error)
            return ReadResult(error, state.state_epoch, state.start_offset, state.batches,
                              state.leader_epoch)

        def remote(channel: BrokerChannel) -> ReadResult:
            response = channel.request(ApiKey.READ_SHARE_GROUP_STATE, 0, _request(
                key, {"leader_epoch": leader_epoch}))
            result = _partition_result(response)
            return ReadResult(ErrorCode(result["error_code"]), result["state_epoch"],
                              result["start_offset"], tuple(
                                  StateBatch(b["first_offset"], b["last_offset"],
                                             b["delivery_state"], b["delivery_count"])
                                  for b in result["state_batches"]))

        return self._call(key, local, remote, lambda error: ReadResult(error))

    def summary(self, key: StateKey) -> ReadResult:
        def local() -> ReadResult:
            error, state = self.coordinator.summary(key)
            if error or state is None:
                return ReadResult(error)
            return ReadResult(error, state.state_epoch, state.start_offset, (),
                              state.leader_epoch)

        def remote(channel: BrokerChannel) -> ReadResult:
            response = channel.request(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, _request(
                key, {"leader_epoch": -1}))
            result = _partition_result(response)
            return ReadResult(ErrorCode(result["error_code"]), result["state_epoch"],
                              result["start_offset"], (), result["leader_epoch"])

        return self._call(key, local, remote, lambda error: ReadResult(error))

    def write(self, key: StateKey, state_epoch: int, leader_epoch: int, start_offset: int,
              batches: Iterable[StateBatch]) -> ErrorCode:
        batches = tuple(batches)

        def remote(channel: BrokerChannel) -> ErrorCode:
            response = channel.request(ApiKey.WRITE_SHARE_GROUP_STATE, 0, _request(key, {
                "state_epoch": state_epoch, "leader_epoch": leader_epoch,
                "start_offset": start_offset,
                "state_batches": [{"first_offset": b.first_offset, "last_offset": b.last_offset,
                                   "delivery_state": b.delivery_state,
                                   "delivery_count": b.delivery_count} for b in batches]}))
            return ErrorCode(_partition_result(response)["error_code"])

        return self._call(key, lambda: self.coordinator.write(
            key, state_epoch, leader_epoch, start_offset, batches), remote, lambda e: e)

    def initialize(self, key: StateKey, state_epoch: int, start_offset: int) -> ErrorCode:
        def remote(channel: BrokerChannel) -> ErrorCode:
            response = channel.request(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, _request(key, {
                "state_epoch": state_epoch, "start_offset": start_offset}))
            return ErrorCode(_partition_result(response)["error_code"])

        return self._call(key, lambda: self.coordinator.initialize(key, state_epoch,
                                                                   start_offset),
                          remote, lambda e: e)

    def delete(self, key: StateKey) -> ErrorCode:
        def remote(channel: BrokerChannel) -> ErrorCode:
            response = channel.request(ApiKey.DELETE_SHARE_GROUP_STATE, 0, _request(key, {}))
            return ErrorCode(_partition_result(response)["error_code"])

        return self._call(key, lambda: self.coordinator.delete(key), remote, lambda e: e)

    # -- routing -----------------------------------------------------------------------------

    def _call(self, key: StateKey, local: Callable, remote: Callable[[BrokerChannel], object],
              failed: Callable[[ErrorCode], object]):
        deadline = time.monotonic() + self.timeout_ms / 1000
        pause = 0.02
        while True:
            error, result = self._try(key, local, remote, failed)
            if error not in RETRIABLE or time.monotonic() + pause > deadline:
                return result
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _try(self, key: StateKey, local, remote, failed) -> tuple[ErrorCode, object]:
        partition = self.coordinator.partition_for(key.coordinator_key)
        leader = self.leader_of(partition)
        if leader is None:
            try:
                self.coordinator.create_topic()
            except Exception as exc:  # (any failure: retried, the answer is the same)
                logger.warning("could not create the share state topic: %s", exc)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, failed(
                ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if leader < 0:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, failed(
                ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if leader == self.broker_id():
            result = local()
        else:
            channel = self._channel(leader)
            if channel is None:
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, failed(
                    ErrorCode.COORDINATOR_NOT_AVAILABLE)
            try:
                with self._channels_lock:  # a channel carries one request at a time
                    result = remote(channel)
            except ConnectionError as exc:
                logger.info("share state request to broker %d failed: %s", leader, exc)
                return ErrorCode.COORDINATOR_NOT_AVAILABLE, failed(
                    ErrorCode.COORDINATOR_NOT_AVAILABLE)
        error = result if isinstance(result, ErrorCode) else result.error
        return error, result

    def _channel(self, broker_id: int) -> BrokerChannel | None:
        address = self.address_of(broker_id)
        if address is None:
            return None
        with self._channels_lock:  # (held by the caller while the request runs too)
            channel = self._channels.get(broker_id)
            if channel is None or channel.address != address:
                if channel is not None:
                    channel.close()
                channel = self._channels[broker_id] = BrokerChannel(
                    *address, self.timeout_ms / 1000, self.security,
                    client_id="share-partition-leader")
            return channel


def _request(key: StateKey, partition_fields: dict) -> dict:
    return {"group_id": key.group_id, "topics": [{"topic_id": key.topic_id, "partitions": [
        {"partition": key.partition, **partition_fields}]}]}


def _partition_result(response: dict) -> dict:
    try:
        return response["results"][0]["partitions"][0]
    except (KeyError, IndexError):
        return {"error_code": ErrorCode.UNKNOWN_SERVER_ERROR, "state_epoch": 0,
                "start_offset": UNINITIALIZED, "state_batches": [], "leader_epoch": -1}
