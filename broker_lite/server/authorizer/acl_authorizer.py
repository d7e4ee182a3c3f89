"""Kafka's ZooKeeper-mode authorizer (``kafka.security.authorizer.AclAuthorizer``): ACLs stored in
ZooKeeper, held in memory by every broker, followed through change notifications.

Storage (:mod:`broker_lite.zk.layout`, the same znodes and bytes as Kafka)::

    /kafka-acl/Topic/events                      {"version":1,"acls":[{"principal":"User:alice",
                                                   "permissionType":"Allow","operation":"Read",
                                                   "host":"*"}]}
    /kafka-acl-extended/prefixed/Group/etl-      (PREFIXED patterns, the same JSON)
    /kafka-acl-changes/acl_changes_0000000007    TOPIC:events
    /kafka-acl-extended-changes/acl_changes_...  {"version":1,"resourceType":"GROUP",
                                                   "name":"etl-","patternType":"PREFIXED"}

At start the authorizer creates the paths, starts following both change paths, then loads every
pattern's ACLs (so no change is missed between the two). A change (CreateAcls, DeleteAcls on any
broker, or Kafka's own tools on the same ZooKeeper) rewrites the pattern's znode with a
conditional update on the version last read, retried on a conflict up to 10 times after a
short random pause (reading the znode again), deletes it when no ACL is left, then announces the
pattern; every broker re-reads the pattern it names. Decisions are :class:`~.cache.AclCache`'s.

Refused here (each binding on its own, INVALID_REQUEST): bindings with unknown or filter-only
values (resource type ANY, pattern type MATCH or ANY, operation ANY, permission ANY), names
containing ``/`` (a znode path), and principals that are not ``Type:name``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, PatternType, ResourceType
from broker_lite.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    InvalidAclError,
    ResourcePattern,
    parse_principal,
    parse_resource_type,
)
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.layout import (
    ACL_CHANGE_PREFIX,
    ACL_PATHS,
    ACL_PATTERN_TYPES,
    AclChangeNotificationSequenceZNode,
    AclStore,
    ResourceZNode,
)
from broker_lite.zk.notifications import ChangeNotificationListener

from .cache import NO_ACLS, NO_ZNODE, AclCache, VersionedAcls

logger = logging.getLogger(__name__)

MAX_UPDATE_RETRIES = 10
RETRY_BACKOFF_MS, RETRY_JITTER_MS = 100, 50


class AclUpdateConflictError(Exception):
    """A pattern's znode kept changing under every retry of an update."""


@dataclass(frozen=True)
class AclError:
    """Why one binding was not created or deleted: Kafka's error code and message."""

    code: ErrorCode
    message: str | None = None


@dataclass
class AclDeleteResult:
    """What one DeleteAcls filter removed: each binding, with the error that kept it (None
    when it was deleted)."""

    deleted: list[tuple[AclBinding, AclError | None]] = field(default_factory=list)


def validate_binding(binding: AclBinding) -> None:
    """Raise :class:`InvalidAclError` for a binding Kafka's AclAuthorizer refuses to store."""
    if binding.is_unknown:
        raise InvalidAclError("ACL binding contains unknown elements")
    if "/" in binding.pattern.name:
        raise InvalidAclError(f"ACL binding contains invalid resource name: "
                              f"{binding.pattern.name}")
    parse_principal(binding.entry.principal)


def _filter_resources(binding_filter: AclBindingFilter) -> list[ResourcePattern]:
    """The patterns a filter that matches at most one names (Kafka's ``filterToResources``)."""
    pattern_filter = binding_filter.pattern_filter
    if pattern_filter.name is None:  # any name: it does not name one pattern
        return []
    types = ACL_PATTERN_TYPES if pattern_filter.pattern_type == PatternType.ANY \
        else (pattern_filter.pattern_type,)
    return [ResourcePattern(pattern_filter.resource_type, pattern_filter.name, t) for t in types]


class AclAuthorizer:
    """ACLs in ZooKeeper (``client``, the broker's session), decided by an
    :class:`~.cache.AclCache` with ``super_users`` and ``allow_everyone_if_no_acl_found``.
    ``start()`` before use, ``stop()`` at shutdown."""

    def __init__(self, client: KazooClient, super_users: Iterable[str] = (),
                 allow_everyone_if_no_acl_found: bool = False, *,
                 sleep: Callable[[float], None] = time.sleep):
        self.client = client
        self.cache = AclCache(super_users, allow_everyone_if_no_acl_found)
        self._lock = threading.RLock()  # one change at a time in this broker
        self._sleep = sleep
        self._listeners = [
            ChangeNotificationListener(client, AclStore.changes_path(pattern_type),
                                       ACL_CHANGE_PREFIX, self._on_change)
            for pattern_type in ACL_PATTERN_TYPES]

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> AclAuthorizer:
        for path in ACL_PATHS:
            self.client.ensure_path(path)
        for listener in self._listeners:
            listener.start()
        with self._lock:
            self.cache.replace_all(self._load_all())
        logger.info("ACL authorizer started with the ACLs of %d resource patterns",
                    len(self.cache.patterns()))
        return self

    def stop(self) -> None:
        for listener in self._listeners:
            listener.stop()

    def _load_all(self) -> dict[ResourcePattern, VersionedAcls]:
        loaded = {}
        for pattern_type in ACL_PATTERN_TYPES:
            root = AclStore.root(pattern_type)
            for type_name in self.client.get_children(root):
                resource_type = parse_resource_type(type_name)
                if resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
                    logger.warning("ignoring ACLs of unknown resource type %s", type_name)
                    continue
                for name in self.client.get_children(f"{root}/{type_name}"):
                    pattern = ResourcePattern(resource_type, name, pattern_type)
                    loaded[pattern] = self._read(pattern)
        return loaded

    def _read(self, pattern: ResourcePattern) -> VersionedAcls:
        path = ResourceZNode.path(pattern)
        try:
            data, stat = self.client.get(path)
        except NoNodeError:
            return NO_ACLS
        try:
            return VersionedAcls(ResourceZNode.decode(data, path), stat.version)
        except MalformedZnodeError:
            logger.exception("unreadable ACLs ignored")
            return VersionedAcls(frozenset(), stat.version)

    def _on_change(self, path: str, data: bytes) -> None:
        pattern = AclChangeNotificationSequenceZNode.decode(data, path)
        with self._lock:
            acls = self._read(pattern)
            self.cache.update(pattern, acls)
        logger.info("ACLs of %s changed: %d now", pattern, len(acls.entries))

    # -- decisions (the cache's) -----------------------------------------------------------------

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        return self.cache.authorize(principal, host, operation, resource_type, name)

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        return self.cache.authorize_by_resource_type(principal, host, operation, resource_type)

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return self.cache.bindings(binding_filter)

    # -- changes ---------------------------------------------------------------------------------

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclError | None]:
        """Add each binding to its pattern's ACLs; the error of each (None: created)."""
        results: list[AclError | None] = [None] * len(bindings)
        by_pattern: dict[ResourcePattern, list[int]] = {}
        for index, binding in enumerate(bindings):
            try:
                validate_binding(binding)
            except InvalidAclError as exc:
                results[index] = AclError(ErrorCode.INVALID_REQUEST,
                                          f"Failed to create ACL: {exc}")
                continue
            by_pattern.setdefault(binding.pattern, []).append(index)
        with self._lock:
            for pattern, indexes in by_pattern.items():
                added = frozenset(bindings[i].entry for i in indexes)
                try:
                    self._update(pattern, added.union)
                except (KazooException, AclUpdateConflictError) as exc:
                    logger.error("creating ACLs of %s failed: %s", pattern, exc)
                    for i in indexes:
                        results[i] = AclError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
        return results

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        """Remove the bindings each filter matches (a binding matched by several filters is
        reported under the first); one result per filter."""
        results = [AclDeleteResult() for _ in filters]
        with self._lock:
            patterns = set(self.cache.patterns())
            for binding_filter in filters:
                if binding_filter.pattern_filter.matches_at_most_one:
                    patterns.update(_filter_resources(binding_filter))
            for pattern in sorted(patterns):
                matching = [(i, f) for i, f in enumerate(filters)
                            if f.pattern_filter.matches(pattern)]
                if matching:
                    self._delete_matching(pattern, matching, results)
        return results

    def _delete_matching(self, pattern: ResourcePattern,
                         matching: list[tuple[int, AclBindingFilter]],
                         results: list[AclDeleteResult]) -> None:
        removed: dict[AccessControlEntry, int] = {}  # entry -> the first filter matching it

        def without_matching(current: frozenset[AccessControlEntry]
                             ) -> frozenset[AccessControlEntry]:
            removed.clear()
            for entry in current:
                index = next((i for i, f in matching if f.entry_filter.matches(entry)), None)
                if index is not None:
                    removed[entry] = index
            return current - removed.keys()

        try:
            self._update(pattern, without_matching)
            error = None
        except (KazooException, AclUpdateConflictError) as exc:
            logger.error("deleting ACLs of %s failed: %s", pattern, exc)
            error = AclError(ErrorCode.UNKNOWN_SERVER_ERROR, None)
        for entry, index in sorted(removed.items()):
            results[index].deleted.append((AclBinding(pattern, entry), error))

    def _update(self, pattern: ResourcePattern,
                new_entries: Callable[[frozenset[AccessControlEntry]],
                                      frozenset[AccessControlEntry]]) -> bool:
        """Write ``new_entries(current)`` as the pattern's ACLs with a conditional update,
        retried on conflicts; announce the change. True when the ACLs changed (Kafka's
        ``updateResourceAcls``)."""
        current = self.cache.get(pattern) or self._read(pattern)
        attempt = 0
        while True:
            entries = frozenset(new_entries(current.entries))
            version = self._write(pattern, entries, current.version)
            if version is not None:
                break
            if attempt == MAX_UPDATE_RETRIES:
                raise AclUpdateConflictError(f"failed to update the ACLs of {pattern} after "
                                             f"{MAX_UPDATE_RETRIES} retries")
            attempt += 1
            self._sleep((RETRY_BACKOFF_MS + random.randrange(RETRY_JITTER_MS)) / 1000)
            current = self._read(pattern)
        self.cache.update(pattern, VersionedAcls(entries, version))
        if entries == current.entries:
            return False
        self.client.create(AclChangeNotificationSequenceZNode.path_prefix(pattern.pattern_type),
                           AclChangeNotificationSequenceZNode.encode(pattern), sequence=True)
        logger.info("updated the ACLs of %s: %d now", pattern, len(entries))
        return True

    def _write(self, pattern: ResourcePattern, entries: frozenset[AccessControlEntry],
               expected: int) -> int | None:
        """The znode's new version, or None when another writer came first."""
        path = ResourceZNode.path(pattern)
        try:
            if not entries:
                if expected != NO_ZNODE:
                    self.client.delete(path, version=expected)
                return NO_ZNODE
            if expected == NO_ZNODE:
                self.client.create(path, ResourceZNode.encode(entries), makepath=True)
                return 0
            return self.client.set(path, ResourceZNode.encode(entries), version=expected).version
        except NoNodeError:
            return NO_ZNODE if not entries else None
        except (BadVersionError, NodeExistsError):
            return None
