"""Electing the primary: registry processes as members of one Kafka consumer group.

Confluent's registry (``KafkaGroupLeaderElector``) and Karapace (``SchemaCoordinator``) elect
the process that takes writes through Kafka's group protocol, and this one does the same, in
the same group (``schema.registry.group.id``, default ``schema-registry``) with the same
messages, so processes of all three can share a cluster:

- every process joins with protocol type ``sr`` and one protocol, ``v0``, whose metadata is
  its identity as JSON: ``{"version": 1, "host": ..., "port": ..., "scheme": "http",
  "master_eligibility": true}`` (``leader.eligibility``);
- the group's leader assigns: the eligible member whose URL (``scheme://host:port``) sorts
  first is the primary (if none is eligible, the first of all, whom nobody then treats as
  primary), and every member's assignment is ``{"master": <member id>, "master_identity":
  {...}, "error": 0}``;
- members heartbeat; when one joins or leaves (its session expires, or it stops and leaves),
  the group rebalances and the assignment is made again.

:class:`PrimaryElector` runs this in a thread and tells who the primary is
(:meth:`PrimaryElector.primary`); during a rebalance nobody is, and writes wait for the next
assignment (:meth:`PrimaryElector.wait_for_primary`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker_lite.client import KafkaClient, KafkaClientError
from broker_lite.client.cluster.coordinators import GROUP, Coordinators
from broker_lite.protocol import ApiKey, ErrorCode

logger = logging.getLogger(__name__)

PROTOCOL_TYPE = "sr"
PROTOCOL_NAME = "v0"
REJOIN = (ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION)
FORGOTTEN = (ErrorCode.UNKNOWN_MEMBER_ID,)


@dataclass(frozen=True)
class Identity:
    """A registry process as the group sees it."""

    host: str
    port: int
    scheme: str = "http"
    eligible: bool = True

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "host": self.host, "port": self.port, "scheme": self.scheme,
                "master_eligibility": self.eligible}

    @classmethod
    def from_json(cls, found: Mapping[str, Any]) -> Identity:
        return cls(str(found["host"]), int(found["port"]), str(found.get("scheme", "http")),
                   bool(found.get("master_eligibility", True)))


def assign(members: Mapping[str, Identity]) -> dict[str, bytes]:
    """The group leader's assignment: member id -> assignment JSON, every member told the same
    primary (the eligible member with the first URL).

    >>> out = assign({"m1": Identity("b", 1), "m2": Identity("a", 1, eligible=False),
    ...               "m3": Identity("c", 1)})
    >>> json.loads(out["m2"])["master"]
    'm1'
    """
    eligible = {identity.url: member for member, identity in members.items()
                if identity.eligible}
    pool = eligible or {identity.url: member for member, identity in members.items()}
    chosen = pool[sorted(pool)[0]]
    body = json.dumps({"master": chosen, "master_identity": members[chosen].to_json(),
                       "error": 0}).encode()
    return dict.fromkeys(members, body)


class PrimaryElector:
    """This process's membership of the registry group, in a thread of its own."""

    def __init__(self, client_settings: Mapping[str, Any], identity: Identity,
                 group_id: str = "schema-registry", session_timeout_ms: int = 10000,
                 heartbeat_interval_ms: int = 1000):
        self.identity = identity
        self.group_id = group_id
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        # connections of its own: a JoinGroup waits at the coordinator, and must not hold up
        # the store's fetches on a shared connection
        self.client = KafkaClient({**client_settings,
                                   "request.timeout.ms": str(session_timeout_ms + 30000)})
        self.coordinators = Coordinators(self.client.cluster, GROUP)
        self.member_id = ""
        self.generation = -1
        self._primary: Identity | None = None
        self._is_primary = False
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"registry-election-{group_id}")

    def start(self) -> PrimaryElector:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=15)
        if self.member_id:
            try:
                self._call("leave the group", ApiKey.LEAVE_GROUP, lambda v: {
                    "group_id": self.group_id, "member_id": self.member_id,
                    "members": [{"member_id": self.member_id, "group_instance_id": None}]})
            except KafkaClientError as exc:
                logger.info("leaving the registry group failed: %s", exc)
        self.client.close()

    # -- who is primary -------------------------------------------------------------------------

    @property
    def is_primary(self) -> bool:
        return self._is_primary

    def primary(self) -> Identity | None:
        """The primary as last assigned (None while the group rebalances)."""
        return self._primary

    def wait_for_primary(self, timeout_s: float) -> Identity | None:
        with self._changed:
            self._changed.wait_for(lambda: self._primary is not None or self._stopping.is_set(),
                                   timeout_s)
            return self._primary

    def _set_primary(self, primary: Identity | None, mine: bool) -> None:
        with self._changed:
            if primary != self._primary or mine != self._is_primary:
                logger.info("registry primary: %s%s", primary.url if primary else "none",
                            " (this process)" if mine else "")
            self._primary, self._is_primary = primary, mine
            self._changed.notify_all()

    # -- the group protocol ---------------------------------------------------------------------

    def _call(self, what: str, api_key: ApiKey, body: Any) -> dict[str, Any]:
        result = self.coordinators.call(what, self.group_id, api_key, body,
                                        lambda version, response: response)
        assert isinstance(result, dict)
        return result

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                if self._join_and_sync():
                    self._heartbeat_until_rebalance()
            except KafkaClientError as exc:
                if not self._stopping.is_set():
                    logger.warning("registry election: %s", exc)
                    self._set_primary(None, False)
                    self._stopping.wait(1.0)
            except Exception:  # the election thread must not die of a bug unseen
                logger.exception("registry election failed")
                self._set_primary(None, False)
                self._stopping.wait(1.0)
        self._set_primary(None, False)

    def _join_and_sync(self) -> bool:
        """One join and sync; True once this member has an assignment."""
        self._set_primary(None, False)
        metadata = json.dumps(self.identity.to_json()).encode()
        joined = self._call("join the registry group", ApiKey.JOIN_GROUP, lambda v: {
            "group_id": self.group_id, "session_timeout_ms": self.session_timeout_ms,
            "rebalance_timeout_ms": self.session_timeout_ms, "member_id": self.member_id,
            "group_instance_id": None, "protocol_type": PROTOCOL_TYPE,
            "protocols": [{"name": PROTOCOL_NAME, "metadata": metadata}], "reason": None})
        error = joined["error_code"]
        if error == ErrorCode.MEMBER_ID_REQUIRED:
            self.member_id = joined["member_id"]
            return False
        if error in FORGOTTEN:
            self.member_id = ""
            return False
        if error in REJOIN:
            return False
        if error != ErrorCode.NONE:
            raise KafkaClientError(f"JoinGroup failed: {ErrorCode.of(error).name}")
        self.member_id, self.generation = joined["member_id"], joined["generation_id"]
        assignments: dict[str, bytes] = {}
        if joined["leader"] == self.member_id:
            members = {m["member_id"]: Identity.from_json(json.loads(m["metadata"]))
                       for m in joined["members"]}
            assignments = assign(members)
        synced = self._call("sync the registry group", ApiKey.SYNC_GROUP, lambda v: {
            "group_id": self.group_id, "generation_id": self.generation,
            "member_id": self.member_id, "group_instance_id": None,
            "protocol_type": PROTOCOL_TYPE, "protocol_name": PROTOCOL_NAME,
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments.items()]})
        error = synced["error_code"]
        if error in FORGOTTEN:
            self.member_id = ""
            return False
        if error != ErrorCode.NONE:
            return False
        assignment = json.loads(synced["assignment"])
        primary = Identity.from_json(assignment["master_identity"])
        mine = assignment["master"] == self.member_id and primary.eligible
        self._set_primary(primary if primary.eligible else None, mine)
        return True

    def _heartbeat_until_rebalance(self) -> None:
        while not self._stopping.wait(self.heartbeat_interval_ms / 1000):
            answer = self._call("heartbeat", ApiKey.HEARTBEAT, lambda v: {
                "group_id": self.group_id, "generation_id": self.generation,
                "member_id": self.member_id, "group_instance_id": None})
            error = answer["error_code"]
            if error == ErrorCode.NONE:
                continue
            if error in FORGOTTEN:
                self.member_id = ""
            return

