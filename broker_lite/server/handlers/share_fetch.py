"""ShareFetch and ShareAcknowledge (KIP-932): records acquired from the share-partitions this
broker leads, and the members' acknowledgements of them.

Both requests step the member's share session (:mod:`broker_lite.coordinator.share.
partition_manager`); a session error (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH) is
the top-level error. Acknowledgements are applied first, each partition answering its own
(INVALID_RECORD_STATE for records not acquired by the member); then a ShareFetch acquires from
every partition of the session, ``MaxRecords`` in all, within ``MaxBytes``. When nothing could
be acquired it waits (long poll) until records are appended to, or released in, one of the
session's partitions, or ``MaxWaitMs`` passes, as a Fetch waits for ``MinBytes``. A request of
epoch -1 closes the session: its acknowledgements are applied, nothing is fetched, and what the
member still holds here is released.

Authorization, as Kafka's ``KafkaApis``: Read on the group (else GROUP_AUTHORIZATION_FAILED for
the whole request), Read on each topic (else TOPIC_AUTHORIZATION_FAILED for its partitions).
"""

from __future__ import annotations

import uuid

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.share.partition_manager import SharePartitionManager, ShareSession
from broker_lite.coordinator.share.records import StateKey
from broker_lite.coordinator.share.service import ShareService
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType

from ..dispatcher import RESPONDS_LATER, DelayedResponse, RequestContext
from ..errors import not_served_error
from ..services import HandlerServices

REFUSED = "<refused>"


def _partition_entry(index: int) -> dict:
    return {"partition_index": index, "error_code": 0, "error_message": None,
            "acknowledge_error_code": 0, "acknowledge_error_message": None,
            "current_leader": {"leader_id": -1, "leader_epoch": -1}, "records": b"",
            "acquired_records": []}


class _Answer:
    """The partitions of a response, by (topic id, partition)."""

    def __init__(self, services: HandlerServices):
        self.services = services
        self.partitions: dict[tuple[uuid.UUID, int], dict] = {}

    def entry(self, topic_id: uuid.UUID, index: int, topic: str | None) -> dict:
        key = (topic_id, index)
        entry = self.partitions.get(key)
        if entry is None:
            entry = self.partitions[key] = _partition_entry(index)
            if topic and topic != REFUSED:
                state = self.services.cluster.partition_state(topic, index)
                if state is not None:
                    entry["current_leader"] = {"leader_id": state.leader,
                                               "leader_epoch": state.leader_epoch}
        return entry

    def responses(self, with_acks: bool = True) -> list[dict]:
        by_topic: dict[uuid.UUID, list[dict]] = {}
        for (topic_id, _), entry in sorted(self.partitions.items(), key=lambda i: (
                str(i[0][0]), i[0][1])):
            if not with_acks:
                entry = {k: v for k, v in entry.items() if not k.startswith("acknowledge")}
            by_topic.setdefault(topic_id, []).append(entry)
        return [{"topic_id": t, "partitions": p} for t, p in by_topic.items()]


def _names(context: RequestContext, topic_ids) -> dict[uuid.UUID, str | None]:
    """Each topic id's name, :data:`REFUSED` when the principal may not read it, None when
    it is not known."""
    names = {t: context.services.cluster.topic_name(t) for t in topic_ids}
    readable = context.authorized_names(AclOperation.READ, ResourceType.TOPIC,
                                        [n for n in names.values() if n is not None])
    return {t: (REFUSED if n is not None and n not in readable else n) for t, n in names.items()}


def _top_level(body: dict, error: ErrorCode, message: str | None = None, **extra) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "error_message": message,
            "acquisition_lock_timeout_ms": 0, "responses": [], "node_endpoints": [], **extra}


def enabled_share(context: RequestContext) -> ShareService | None:
    """The broker's share groups, None unless ``group.share.enable``."""
    share = context.services.share
    return share if share is not None and share.enabled else None


def _checked(context: RequestContext, body: dict) -> ShareService | dict:
    """The share service to serve a ShareFetch or ShareAcknowledge with, or the answer to a
    request refused as a whole."""
    share = enabled_share(context)
    if share is None:
        return _top_level(body, ErrorCode.UNSUPPORTED_VERSION, "Share groups are not enabled")
    if not body["group_id"] or not body["member_id"]:
        return _top_level(body, ErrorCode.INVALID_REQUEST, "GroupId and MemberId are required")
    if not context.authorize(AclOperation.READ, ResourceType.GROUP, body["group_id"]):
        return _top_level(body, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return share


def _not_served(services: HandlerServices, error: ErrorCode, topic: str, index: int
                ) -> ErrorCode:
    """A partition this broker does not lead: UNKNOWN_TOPIC_OR_PARTITION when it is gone or
    going (its topic deleted), else NOT_LEADER_OR_FOLLOWER (the client finds the leader)."""
    if error != ErrorCode.NOT_LEADER_OR_FOLLOWER:
        return error
    if services.admin.is_marked_for_deletion(topic):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return not_served_error(services.cluster, topic, index)


def _acknowledge(manager: SharePartitionManager, body: dict, topics: list[dict],
                 names: dict[uuid.UUID, str | None], answer: _Answer) -> None:
    for topic in topics:
        topic_id = topic["topic_id"]
        name = names.get(topic_id)
        for partition in topic["partitions"]:
            batches = partition.get("acknowledgement_batches") or []
            if not batches:
                continue
            entry = answer.entry(topic_id, partition["partition_index"], name)
            if name is None:
                error, message = ErrorCode.UNKNOWN_TOPIC_ID, None
            elif name == REFUSED:
                error, message = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
            else:
                error, message = manager.acknowledge(
                    StateKey(body["group_id"], topic_id, partition["partition_index"]), name,
                    body["member_id"], batches)
                error = _not_served(answer.services, error, name,
                                    partition["partition_index"])
            entry["acknowledge_error_code"] = error
            entry["acknowledge_error_message"] = message
            entry["error_code"] = entry["error_code"] or 0


def share_fetch(context: RequestContext, body: dict):
    share = _checked(context, body)
    if isinstance(share, dict):
        return share
    services = context.services
    manager = share.partitions
    topic_ids = {t["topic_id"] for t in body["topics"]} | \
        {t["topic_id"] for t in body["forgotten_topics_data"]}
    epoch = body["share_session_epoch"]
    added = [(t["topic_id"], p["partition_index"]) for t in body["topics"]
             for p in t["partitions"]]
    forgotten = [(t["topic_id"], p) for t in body["forgotten_topics_data"]
                 for p in t["partitions"]]
    error, session = manager.session(body["group_id"], body["member_id"], epoch, added=added,
                                     forgotten=forgotten)
    lock_ms = manager.lock_duration_ms(body["group_id"])
    if error or session is None:
        return _top_level(body, error, acquisition_lock_timeout_ms=lock_ms)
    topic_ids |= {t for t, _ in session.partitions}
    names = _names(context, topic_ids)
    answer = _Answer(services)
    _acknowledge(manager, body, body["topics"], names, answer)
    if epoch == -1:
        manager.close_session(session, lambda t: names.get(t) if names.get(t) != REFUSED
                              else None)
        return _response(answer, lock_ms)
    fetch = _ShareFetch(context, manager, body, session, names, answer, lock_ms)
    if fetch.acquire() or body["max_wait_ms"] <= 0 or services.purgatory.stopping:
        return fetch.response()
    services.purgatory.fetch.try_complete_else_watch(fetch, fetch.watched)
    return RESPONDS_LATER


def _response(answer: _Answer, lock_ms: int) -> dict:
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "acquisition_lock_timeout_ms": lock_ms, "responses": answer.responses(),
            "node_endpoints": []}


class _ShareFetch(DelayedResponse):
    """A ShareFetch acquiring from its session's partitions, now or, waiting in the purgatory,
    once records arrive or are released."""

    def __init__(self, context: RequestContext, manager: SharePartitionManager, body: dict,
                 session: ShareSession, names: dict, answer: _Answer, lock_ms: int):
        super().__init__(context, max(body["max_wait_ms"], 0))
        self.manager = manager
        self.body = body
        self.session = session
        self.names = names
        self.answer = answer
        self.lock_ms = lock_ms
        self.watched = [TopicPartition(names[t], p) for t, p in sorted(
            session.partitions, key=lambda i: (str(i[0]), i[1]))
            if names.get(t) not in (None, REFUSED)]

    def acquire(self, wait: bool = True) -> bool:
        """Acquire from the session's partitions, in turn, until one gives records; whether
        any did (``wait``: see :meth:`~broker_lite.coordinator.share.partition_manager.
        SharePartitionManager.acquire`). A response carries the records of one partition, as
        Kafka's answers to librdkafka's share consumer do (its tests expect one partition's
        records a poll); the next request starts with the next partition."""
        manager = self.manager
        records_left = max(self.body.get("max_records", 500) or 500, 1)
        bytes_left = self.body["max_bytes"]
        got = False
        for topic_id, index in self.session.in_turn():
            if got:
                break
            name = self.names.get(topic_id)
            if name is None or name == REFUSED:
                entry = self.answer.entry(topic_id, index, name)
                entry["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID if name is None \
                    else ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if records_left <= 0 or bytes_left <= 0:
                break
            acquired = manager.acquire(StateKey(self.body["group_id"], topic_id, index), name,
                                       self.body["member_id"], max_records=records_left,
                                       max_bytes=bytes_left, wait=wait,
                                       record_limit=self.body.get("share_acquire_mode") == 1)
            if acquired.error:
                entry = self.answer.entry(topic_id, index, name)
                entry["error_code"] = _not_served(self.context.services, acquired.error, name,
                                                  index)
                entry["error_message"] = acquired.message
                continue
            if not acquired.ranges:
                continue
            entry = self.answer.entry(topic_id, index, name)
            entry["records"] = acquired.records
            entry["acquired_records"] = [{"first_offset": r.first_offset,
                                          "last_offset": r.last_offset,
                                          "delivery_count": r.delivery_count}
                                         for r in acquired.ranges]
            records_left -= sum(r.last_offset - r.first_offset + 1 for r in acquired.ranges)
            bytes_left -= len(acquired.records)
            got = True
        return got or any(e["error_code"] for e in self.answer.partitions.values())

    def try_complete(self) -> bool:
        return self.acquire(wait=False) and self.force_complete()

    def response(self) -> dict:
        return _response(self.answer, self.lock_ms)


def share_acknowledge(context: RequestContext, body: dict) -> dict:
    share = _checked(context, body)
    if isinstance(share, dict):
        return share
    services = context.services
    manager = share.partitions
    epoch = body["share_session_epoch"]
    error, session = manager.session(body["group_id"], body["member_id"], epoch, opens=False)
    lock_ms = manager.lock_duration_ms(body["group_id"])
    if error or session is None:
        return {"throttle_time_ms": 0, "error_code": error, "error_message": None,
                "acquisition_lock_timeout_ms": lock_ms, "responses": [], "node_endpoints": []}
    names = _names(context, {t["topic_id"] for t in body["topics"]} |
                   {t for t, _ in session.partitions})
    answer = _Answer(services)
    _acknowledge(manager, body, body["topics"], names, answer)
    for entry in answer.partitions.values():
        entry["error_code"] = entry["acknowledge_error_code"]
        entry["error_message"] = entry["acknowledge_error_message"]
    if epoch == -1:
        manager.close_session(session, lambda t: names.get(t) if names.get(t) != REFUSED
                              else None)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
            "acquisition_lock_timeout_ms": lock_ms,
            "responses": [{"topic_id": t["topic_id"], "partitions": [
                {k: p[k] for k in ("partition_index", "error_code", "error_message",
                                   "current_leader")} for p in t["partitions"]]}
                for t in answer.responses()], "node_endpoints": []}
