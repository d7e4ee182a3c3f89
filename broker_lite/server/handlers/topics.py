"""CreateTopics, DeleteTopics and CreatePartitions, as a Kafka 3.9 broker in ZooKeeper mode
serves them: validate, write the znodes (:mod:`broker_lite.zk.admin`), and let the controller act.

Like Kafka's broker, each request then waits, up to its ``timeout_ms``, for the outcome: created
topics and partitions until every new partition has a leader (and, when this broker leads it,
until this broker serves it), deleted topics until they are gone from ZooKeeper and from this
broker's logs. What is not done by then answers REQUEST_TIMED_OUT, and so does everything a
request with ``timeout_ms <= 0`` started (Kafka's answer: the work goes on, unobserved).
``validate_only`` requests run every check and change nothing.
"""

import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable

from broker_lite.config import ConfigError
from broker_lite.protocol import ErrorCode
from broker_lite.zk.admin import (
    add_partitions,
    create_topic,
    delete_topic,
    get_topic_assignment,
    validate_topic_name,
)
from broker_lite.zk.assignment import assign_replicas
from broker_lite.zk.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
    ZooKeeperError,
)
from broker_lite.zk.layout import TOPICS_PATH, DeleteTopicsTopicZNode, TopicZNode
from broker_lite.zk.registration import live_broker_ids

from ..metadata import has_serving_leader
from .configs import ApiError, topic_config_entries, validate_topic_overrides

logger = logging.getLogger(__name__)

NO_TOPIC_ID = uuid.UUID(int=0)
POLL_INTERVAL_S = 0.02

_ADMIN_ERRORS = [  # broker_lite.zk errors as Kafka error codes, most specific first
    (InvalidTopicError, ErrorCode.INVALID_TOPIC_EXCEPTION),
    (TopicAlreadyMarkedForDeletionError, ErrorCode.INVALID_TOPIC_EXCEPTION),
    (TopicExistsError, ErrorCode.TOPIC_ALREADY_EXISTS),
    (UnknownTopicError, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (InvalidPartitionsError, ErrorCode.INVALID_PARTITIONS),
    (InvalidReplicationFactorError, ErrorCode.INVALID_REPLICATION_FACTOR),
    (InvalidReplicaAssignmentError, ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    (ConfigError, ErrorCode.INVALID_CONFIG),
]


def _api_error(exc: Exception) -> ApiError:
    for kind, code in _ADMIN_ERRORS:
        if isinstance(exc, kind):
            return ApiError(code, str(exc))
    logger.error("topic administration failed", exc_info=exc)
    return ApiError(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))


def _exists(services, path: str) -> bool:
    return services.zk.exists(path) is not None


def _wait(context, timeout_ms: int, pending: set, done: Callable[[object], bool]) -> set:
    """Poll until every pending item is done or the timeout passes; the items left undone."""
    deadline = time.monotonic() + timeout_ms / 1000
    server = getattr(context.connection, "server", None)
    while True:
        pending = {item for item in pending if not done(item)}
        if not pending or time.monotonic() >= deadline or getattr(server, "stopping", False):
            return pending
        time.sleep(POLL_INTERVAL_S)


def _partitions_ready(services, topic: str, partitions=None) -> bool:
    """Every partition (or those numbered in ``partitions``) has a leader, served by this broker
    when it is the leader."""
    known = services.cluster.partitions(topic)
    if known is None:
        return False
    return all(has_serving_leader(services, topic, info) for info in known
               if partitions is None or info.partition in partitions)


# -- CreateTopics ----------------------------------------------------------------------------------


def _check_assignment(assignment: dict[int, tuple[int, ...]]) -> None:
    """Kafka's ``validateTopicCreate`` checks of a manual replica assignment."""
    if len({len(r) for r in assignment.values()}) != 1:
        raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                       "All partitions should have the same number of replicas")
    for replicas in assignment.values():
        if not replicas:
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           "Every partition needs at least one replica")
        if len(set(replicas)) != len(replicas):
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"Duplicate replica assignment found: {assignment}")
    if sorted(assignment) != list(range(len(assignment))):
        raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                       "partitions should be a consecutive 0-based integer sequence")


def _plan_topic(services, topic: dict) -> tuple[dict[int, tuple[int, ...]], dict[str, str]]:
    """Validate one topic of a CreateTopics request, in Kafka's order; its assignment and
    overrides."""
    name = topic["name"]
    nulls = [c["name"] for c in topic["configs"] if c["value"] is None]
    if nulls:
        raise ApiError(ErrorCode.INVALID_CONFIG,
                       f"Null value not supported for topic configs: {', '.join(nulls)}")
    if _exists(services, TopicZNode.path(name)):
        raise ApiError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    partitions, replication_factor = topic["num_partitions"], topic["replication_factor"]
    if topic["assignments"]:
        if partitions != -1 or replication_factor != -1:
            raise ApiError(ErrorCode.INVALID_REQUEST,
                           "Both numPartitions or replicationFactor and replicasAssignments "
                           "were set. Both cannot be used at the same time.")
        assignment = {a["partition_index"]: tuple(a["broker_ids"]) for a in topic["assignments"]}
        if len(assignment) != len(topic["assignments"]):
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           "partitions should be a consecutive 0-based integer sequence")
    else:
        if partitions == -1:
            partitions = services.config["num.partitions"]
        if replication_factor == -1:
            replication_factor = services.config["default.replication.factor"]
        if partitions <= 0:
            raise ApiError(ErrorCode.INVALID_PARTITIONS,
                           "Number of partitions must be larger than 0.")
        if replication_factor <= 0:
            raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                           "Replication factor must be larger than 0.")
        brokers = live_broker_ids(services.zk)
        if replication_factor > len(brokers):
            raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                           f"Replication factor: {replication_factor} larger than available "
                           f"brokers: {len(brokers)}.")
        assignment = assign_replicas(brokers, partitions, replication_factor)
    try:
        validate_topic_name(name)
    except InvalidTopicError as exc:
        raise ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
    if _exists(services, DeleteTopicsTopicZNode.path(name)):
        raise ApiError(ErrorCode.TOPIC_ALREADY_EXISTS, f'Topic "{name}" is queued for deletion.')
    normalized = name.replace(".", "_")
    for existing in services.zk.get_children(TOPICS_PATH):
        if existing != name and existing.replace(".", "_") == normalized:
            raise ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                           f"Topic '{name}' collides with existing topic: {existing}")
    if topic["assignments"]:
        _check_assignment(assignment)
    overrides = {c["name"]: c["value"] for c in topic["configs"]}
    validate_topic_overrides(services.config, overrides)
    return assignment, overrides


def create_topics(context, body: dict) -> dict:
    services = context.services
    validate_only = bool(body.get("validate_only"))
    timeout_ms = body["timeout_ms"]
    counts = Counter(t["name"] for t in body["topics"])
    results, created = [], {}
    for topic in body["topics"]:
        name = topic["name"]
        result = {"name": name, "topic_id": NO_TOPIC_ID, "error_code": 0, "error_message": None,
                  "num_partitions": -1, "replication_factor": -1, "configs": []}
        results.append(result)
        try:
            if counts[name] > 1:
                raise ApiError(ErrorCode.INVALID_REQUEST, "Found multiple entries for this topic.")
            assignment, overrides = _plan_topic(services, topic)
            if not validate_only:
                try:
                    create_topic(services.zk, name, len(assignment), len(assignment[0]),
                                 overrides, replica_assignment=assignment)
                except (ZooKeeperError, ConfigError) as exc:
                    raise _api_error(exc) from None
                logger.info("created topic %s with %d partitions", name, len(assignment))
                info = services.cluster.topic(name)
                result["topic_id"] = info.topic_id if info is not None else NO_TOPIC_ID
                created[name] = result
        except ApiError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
            continue
        if context.version >= 5:
            result.update(num_partitions=len(assignment), replication_factor=len(assignment[0]),
                          configs=[{k: e[k] for k in ("name", "value", "read_only",
                                                      "config_source", "is_sensitive")}
                                   for e in topic_config_entries(services.config, overrides)])
    if created:
        late = set(created) if timeout_ms <= 0 else \
            _wait(context, timeout_ms, set(created), lambda n: _partitions_ready(services, n))
        for name in late:
            created[name].update(error_code=ErrorCode.REQUEST_TIMED_OUT, error_message=None,
                                 num_partitions=-1, replication_factor=-1, configs=[])
    return {"throttle_time_ms": 0, "topics": results}


# -- DeleteTopics ----------------------------------------------------------------------------------


def _topic_gone(services, name: str) -> bool:
    return not _exists(services, TopicZNode.path(name)) \
        and not _exists(services, DeleteTopicsTopicZNode.path(name)) \
        and not any(topic == name for topic, _ in services.logs.partitions())


def delete_topics(context, body: dict) -> dict:
    services = context.services
    if context.version >= 6:
        requested = [(t["name"], t["topic_id"]) for t in body["topics"]]
    else:
        requested = [(name, NO_TOPIC_ID) for name in body["topic_names"]]
    results = [{"name": name, "topic_id": topic_id, "error_code": 0, "error_message": None}
               for name, topic_id in requested]
    response = {"throttle_time_ms": 0, "responses": results}

    def fail_all(code: ErrorCode, message: str) -> dict:
        for result in results:
            result.update(error_code=code, error_message=message)
        return response

    if not services.config["delete.topic.enable"]:
        return fail_all(ErrorCode.INVALID_REQUEST if context.version < 3
                        else ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.")
    if any(name is not None and topic_id != NO_TOPIC_ID for name, topic_id in requested):
        return fail_all(ErrorCode.INVALID_REQUEST,
                        "Topic name and topic ID can not both be specified.")
    pending: dict[str, list[dict]] = {}
    for result in results:
        name = result["name"]
        if result["topic_id"] != NO_TOPIC_ID:  # v6: by topic id
            name = services.cluster.topic_name(result["topic_id"])
            if name is None:
                result.update(error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                              error_message=f"Topic id {result['topic_id']} is unknown.")
                continue
            result["name"] = name
        if name is None or not _exists(services, TopicZNode.path(name)):
            result.update(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          error_message=f"The topic '{name}' does not exist.")
            continue
        if name not in pending:
            try:
                delete_topic(services.zk, name)
                logger.info("topic %s marked for deletion", name)
            except TopicAlreadyMarkedForDeletionError:
                pass  # already on its way: wait for it as well
            except ZooKeeperError as exc:
                error = _api_error(exc)
                result.update(error_code=error.code, error_message=error.message)
                continue
        pending.setdefault(name, []).append(result)
    if pending:
        timeout_ms = body["timeout_ms"]
        late = set(pending) if timeout_ms <= 0 else \
            _wait(context, timeout_ms, set(pending), lambda n: _topic_gone(services, n))
        for name in late:
            for result in pending[name]:
                result.update(error_code=ErrorCode.REQUEST_TIMED_OUT,
                              error_message=f"Deletion of topic '{name}' is still in progress.")
    return response


# -- CreatePartitions ------------------------------------------------------------------------------


def _plan_partitions(services, request: dict) -> dict[int, tuple[int, ...]] | None:
    """Validate one topic of a CreatePartitions request; its manual assignment, if any."""
    name, count = request["name"], request["count"]
    if _exists(services, DeleteTopicsTopicZNode.path(name)):
        raise ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is queued for deletion.")
    try:
        current = get_topic_assignment(services.zk, name)
    except UnknownTopicError:
        raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                       f"The topic '{name}' does not exist.") from None
    if current.adding_replicas or current.removing_replicas:
        raise ApiError(ErrorCode.REASSIGNMENT_IN_PROGRESS,
                       f"A partition reassignment is in progress for the topic '{name}'.")
    existing = len(current.partitions)
    if count < existing:
        raise ApiError(ErrorCode.INVALID_PARTITIONS,
                       f"Topic currently has {existing} partitions, which is higher than the "
                       f"requested {count}.")
    if count == existing:
        raise ApiError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {existing} partitions.")
    replication_factor = len(current.partitions[min(current.partitions)])
    brokers = live_broker_ids(services.zk)
    if request["assignments"] is None:
        if replication_factor > len(brokers):
            raise ApiError(ErrorCode.INVALID_REPLICATION_FACTOR,
                           f"Replication factor: {replication_factor} larger than available "
                           f"brokers: {len(brokers)}.")
        return None
    added = [tuple(a["broker_ids"]) for a in request["assignments"]]
    unknown = sorted({b for replicas in added for b in replicas} - set(brokers))
    if unknown:
        raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                       f"Unknown broker(s) in replica assignment: "
                       f"{', '.join(map(str, unknown))}.")
    if len(added) != count - existing:
        raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                       f"Increasing the number of partitions by {count - existing} but "
                       f"{len(added)} assignments provided.")
    assignment = {existing + i: replicas for i, replicas in enumerate(added)}
    odd = {p: r for p, r in assignment.items() if len(r) != replication_factor}
    if odd:
        raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                       f"Inconsistent replication factor between partitions, partition 0 has "
                       f"{replication_factor} while partitions {list(odd)} have replication "
                       f"factors {[len(r) for r in odd.values()]}, respectively.")
    for partition, replicas in assignment.items():
        if len(set(replicas)) != len(replicas):
            raise ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                           f"Duplicate brokers not allowed in replica assignment: "
                           f"{', '.join(map(str, replicas))} for partition id {partition}.")
    return assignment


def create_partitions(context, body: dict) -> dict:
    services = context.services
    validate_only = bool(body.get("validate_only"))
    counts = Counter(t["name"] for t in body["topics"])
    results, grown = [], {}
    for request in body["topics"]:
        name = request["name"]
        result = {"name": name, "error_code": 0, "error_message": None}
        results.append(result)
        try:
            if counts[name] > 1:
                raise ApiError(ErrorCode.INVALID_REQUEST, "Duplicate topic in request.")
            assignment = _plan_partitions(services, request)
            if not validate_only:
                try:
                    added = add_partitions(services.zk, name, request["count"],
                                           replica_assignment=assignment)
                except (ZooKeeperError, ConfigError) as exc:
                    raise _api_error(exc) from None
                logger.info("topic %s grown to %d partitions", name, request["count"])
                grown[name] = (result, set(added))
        except ApiError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
    if grown:
        timeout_ms = body["timeout_ms"]
        late = set(grown) if timeout_ms <= 0 else _wait(
            context, timeout_ms, set(grown),
            lambda n: _partitions_ready(services, n, grown[n][1]))
        for name in late:
            grown[name][0].update(error_code=ErrorCode.REQUEST_TIMED_OUT, error_message=None)
    return {"throttle_time_ms": 0, "results": results}
