"""CreateTopics, DeleteTopics and CreatePartitions, as a Kafka 3.9 broker in ZooKeeper mode
serves them: the topic admin checks the request as Kafka does and writes the znodes
(:mod:`broker_lite.zk.admin`), and the controller acts.

Like Kafka's broker, each request then waits, up to its ``timeout_ms``, for the outcome: created
topics and partitions until every new partition has a leader (and, when this broker leads it,
until this broker serves it), deleted topics until they are gone from ZooKeeper and from this
broker's logs. What is not done by then answers REQUEST_TIMED_OUT, and so does everything a
request with ``timeout_ms <= 0`` started (Kafka's answer: the work goes on, unobserved).
``validate_only`` requests run every check and change nothing.

Authorization, as Kafka's: creating a topic needs Create on the cluster or on the topic, and
its configs and layout are returned (v5+) only with DescribeConfigs on it (else
``topic_config_error_code`` TOPIC_AUTHORIZATION_FAILED); deleting needs Delete on the topic
(and Describe, to learn the name of a topic given by id); adding partitions Alter on the topic.
Each refusal is TOPIC_AUTHORIZATION_FAILED for that topic alone.
"""

import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection

from broker_lite.config.parsers import ConfigError
from broker_lite.config.resolution import topic_config_entries
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.zk.admin import TopicSpec
from broker_lite.zk.errors import TopicAlreadyMarkedForDeletionError, ZooKeeperError

from ..dispatcher import RequestContext
from ..errors import error_code_for
from ..metadata import serving_leaders
from ..services import HandlerServices
from .configs import entry_dict

logger = logging.getLogger(__name__)

NO_TOPIC_ID = uuid.UUID(int=0)
POLL_INTERVAL_S = 0.02
# The fields of a new topic's configs in CreateTopics v5+.
_CREATED_CONFIG_FIELDS = ("name", "value", "read_only", "config_source", "is_sensitive")
TOPIC = ResourceType.TOPIC
REFUSED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


def _failed(result: dict, exc: Exception) -> None:
    """Answer a refusal (or a failure: logged) of the topic administration for one topic."""
    code = error_code_for(exc)
    if code == ErrorCode.UNKNOWN_SERVER_ERROR:
        logger.error("topic administration failed", exc_info=exc)
    result.update(error_code=code, error_message=str(exc))


def _wait(services: HandlerServices, timeout_ms: int, pending: set,
          done: Callable[[str], bool]) -> set:
    """Poll until every pending item is done or the timeout passes (at once when
    ``timeout_ms <= 0``); the items left undone."""
    if timeout_ms <= 0:
        return pending
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        pending = {item for item in pending if not done(item)}
        if not pending or time.monotonic() >= deadline or services.purgatory.stopping:
            return pending
        time.sleep(POLL_INTERVAL_S)


def _partitions_ready(services: HandlerServices, topic: str,
                      partitions: Collection[int] | None = None) -> bool:
    """Every partition (or those numbered in ``partitions``) has a leader, served by this broker
    when it is the leader."""
    known = services.cluster.partitions(topic)
    if known is None:
        return False
    if partitions is not None and not set(partitions) <= {info.partition for info in known}:
        return False  # the metadata does not list every new partition yet
    return all(serving_leaders(services.partitions, topic, [
        info for info in known if partitions is None or info.partition in partitions]))


# -- CreateTopics ----------------------------------------------------------------------------------


def _spec(topic: dict) -> TopicSpec:
    return TopicSpec(topic["name"], topic["num_partitions"], topic["replication_factor"],
                     [(a["partition_index"], a["broker_ids"]) for a in topic["assignments"]],
                     {c["name"]: c["value"] for c in topic["configs"]})


def create_topics(context: RequestContext, body: dict) -> dict:
    services = context.services
    validate_only = bool(body.get("validate_only"))
    counts = Counter(t["name"] for t in body["topics"])
    may_create = context.authorize(AclOperation.CREATE, ResourceType.CLUSTER, log_denied=False)
    creatable = set(counts) if may_create else \
        context.authorized_names(AclOperation.CREATE, TOPIC, counts)
    describable = context.authorized_names(AclOperation.DESCRIBE_CONFIGS, TOPIC, counts,
                                           log_denied=False)
    results, created = [], {}
    for topic in body["topics"]:
        name = topic["name"]
        result = {"name": name, "topic_id": NO_TOPIC_ID, "error_code": 0, "error_message": None,
                  "num_partitions": -1, "replication_factor": -1, "configs": [],
                  "topic_config_error_code": 0 if name in describable else REFUSED}
        results.append(result)
        if counts[name] > 1:
            result.update(error_code=ErrorCode.INVALID_REQUEST,
                          error_message="Found multiple entries for this topic.")
            continue
        if name not in creatable:
            result.update(error_code=REFUSED, error_message="Authorization failed.")
            continue
        try:
            plan = services.admin.create_topic(_spec(topic), validate_only=validate_only)
        except (ZooKeeperError, ConfigError) as exc:
            _failed(result, exc)
            result["topic_config_error_code"] = ErrorCode.NONE
            continue
        if not validate_only:
            logger.info("created topic %s with %d partitions", name, plan.partitions)
            info = services.cluster.topic(name)
            if name in describable:  # else its id, layout and configs are not shown
                result["topic_id"] = info.topic_id if info is not None else NO_TOPIC_ID
            created[name] = result
        if context.version >= 5 and name in describable:
            result.update(num_partitions=plan.partitions,
                          replication_factor=plan.replication_factor,
                          configs=[{k: v for k, v in entry_dict(e).items()
                                    if k in _CREATED_CONFIG_FIELDS}
                                   for e in topic_config_entries(services.config, plan.overrides)])
    late = _wait(services, body["timeout_ms"], set(created),
                 lambda n: _partitions_ready(services, n))
    for name in late:
        created[name].update(error_code=ErrorCode.REQUEST_TIMED_OUT, error_message=None,
                             num_partitions=-1, replication_factor=-1, configs=[])
    return {"throttle_time_ms": 0, "topics": results}


# -- DeleteTopics ----------------------------------------------------------------------------------


def _topic_gone(services: HandlerServices, name: str) -> bool:
    return services.cluster.partition_count(name) is None \
        and not services.admin.is_marked_for_deletion(name) \
        and not any(topic == name for topic, _ in services.logs.partitions())


def delete_topics(context: RequestContext, body: dict) -> dict:
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
    for result in results:
        if result["topic_id"] != NO_TOPIC_ID:  # v6: by topic id
            result["name"] = services.cluster.topic_name(result["topic_id"])
    named = [r["name"] for r in results if r["name"] is not None]
    describable = context.authorized_names(AclOperation.DESCRIBE, TOPIC, named)
    deletable = context.authorized_names(AclOperation.DELETE, TOPIC, named)
    pending: dict[str, list[dict]] = {}
    for result in results:
        name = result["name"]
        if result["topic_id"] != NO_TOPIC_ID and name is None:
            result.update(error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                          error_message=f"Topic id {result['topic_id']} is unknown.")
            continue
        if result["topic_id"] != NO_TOPIC_ID and name not in describable:
            result.update(name=None, error_code=REFUSED)  # the id is no secret, the name is
            continue
        if name is not None and name not in deletable:
            result.update(error_code=REFUSED)
            continue
        if name is None or services.cluster.partition_count(name) is None:
            result.update(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          error_message=f"The topic '{name}' does not exist.")
            continue
        if name not in pending:
            try:
                services.admin.delete_topic(name)
                logger.info("topic %s marked for deletion", name)
            except TopicAlreadyMarkedForDeletionError:
                pass  # already on its way: wait for it as well
            except ZooKeeperError as exc:
                _failed(result, exc)
                continue
        pending.setdefault(name, []).append(result)
    late = _wait(services, body["timeout_ms"], set(pending), lambda n: _topic_gone(services, n))
    for name in late:
        for result in pending[name]:
            result.update(error_code=ErrorCode.REQUEST_TIMED_OUT,
                          error_message=f"Deletion of topic '{name}' is still in progress.")
    return response


# -- CreatePartitions ------------------------------------------------------------------------------


def create_partitions(context: RequestContext, body: dict) -> dict:
    services = context.services
    validate_only = bool(body.get("validate_only"))
    counts = Counter(t["name"] for t in body["topics"])
    alterable = context.authorized_names(AclOperation.ALTER, TOPIC,
                                         (n for n, count in counts.items() if count == 1))
    results, grown = [], {}
    for request in body["topics"]:
        name = request["name"]
        result = {"name": name, "error_code": 0, "error_message": None}
        results.append(result)
        if counts[name] > 1:
            result.update(error_code=ErrorCode.INVALID_REQUEST,
                          error_message="Duplicate topic in request.")
            continue
        if name not in alterable:
            result.update(error_code=REFUSED, error_message="The topic authorization is failed.")
            continue
        assignment = None if request["assignments"] is None else \
            [a["broker_ids"] for a in request["assignments"]]
        try:
            added = services.admin.create_partitions(name, request["count"], assignment,
                                                     validate_only=validate_only)
        except (ZooKeeperError, ConfigError) as exc:
            _failed(result, exc)
            continue
        if not validate_only:
            logger.info("topic %s grown to %d partitions", name, request["count"])
            grown[name] = (result, set(added))
    late = _wait(services, body["timeout_ms"], set(grown),
                 lambda n: _partitions_ready(services, n, grown[n][1]))
    for name in late:
        grown[name][0].update(error_code=ErrorCode.REQUEST_TIMED_OUT, error_message=None)
    return {"throttle_time_ms": 0, "results": results}
