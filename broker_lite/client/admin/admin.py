"""Topic administration for tests, notebooks and tools: create, delete, add partitions, describe.

CreateTopics, DeleteTopics and CreatePartitions go to the controller (a ZooKeeper-mode Kafka
broker answers NOT_CONTROLLER otherwise; the client then refreshes its metadata and retries).
A request whose answer was lost may have done its work: a retried creation that finds the topic
there (TOPIC_ALREADY_EXISTS), or a retried deletion that finds it gone, counts as done.

Brokers answer once the controller has acted, but other brokers may learn of the change a little
later; so by default (``wait=True``) each call returns only when the cluster metadata shows the
outcome (every partition with a leader, or the topic gone), and a topic is usable right away.

Consumer groups (:mod:`.groups_admin`), topic and broker configuration (:mod:`.configs_admin`)
and ACLs (:mod:`.acls_admin`), and users' SCRAM credentials (:mod:`.scram_admin`) are
administered through ``admin.groups``, ``admin.configs``, ``admin.acls`` (``admin.create_acls``,
``describe_acls`` and ``delete_acls`` are the same) and ``admin.scram_credentials``.

>>> NewTopic.of(("events", 3, 1, {"retention.ms": "60000"}))
NewTopic(name='events', num_partitions=3, replication_factor=1, configs={'retention.ms': '60000'})
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from broker_lite.protocol import ZERO_UUID, ApiKey, ErrorCode

from ..cluster.cluster import Cluster
from ..cluster.metadata import TopicMetadata
from ..errors import (
    InvalidArgumentError,
    LeaderNotAvailableError,
    UnknownTopicOrPartitionError,
    error_for,
    error_of,
    final_error,
)
from ..retry import Deadline, retry
from .acls import AclsAdmin
from .configs import ConfigsAdmin
from .groups import GroupsAdmin
from .scram import ScramCredentialsAdmin

TOPIC_RESOURCE = 2  # DescribeConfigs resource type
FIRST_DELETE_BY_STATE = 6  # DeleteTopics 6+: Topics [{Name, TopicId}] instead of TopicNames
_ANSWER_MARGIN_MS = 500  # the broker's timeout ends this much before the client's


@dataclass(frozen=True)
class NewTopic:
    """A topic to create; -1 partitions or replication factor: the broker's defaults
    (``num.partitions``, ``default.replication.factor``; CreateTopics v4+)."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, spec: NewTopic | tuple) -> NewTopic:
        """A NewTopic, or a tuple ``(name, partitions, replication_factor[, configs])``."""
        if isinstance(spec, NewTopic):
            return spec
        if isinstance(spec, str):
            return cls(spec)
        if not isinstance(spec, tuple) or not 1 <= len(spec) <= 4:
            raise InvalidArgumentError("a topic to create is a NewTopic or a tuple (name, "
                                       f"partitions, replication_factor[, configs]), got {spec!r}")
        padded: tuple = (*spec, *(-1, -1, {})[len(spec) - 1:])
        name, partitions, replication, configs = padded
        return cls(name, partitions, replication, {k: str(v) for k, v in configs.items()})


class Admin:
    """Administrative operations; get one from :attr:`KafkaClient.admin`. Topics here;
    consumer groups in :attr:`groups`, topic and broker configuration in :attr:`configs`, ACLs
    in :attr:`acls` (its methods also here: :meth:`create_acls`, :meth:`describe_acls`,
    :meth:`delete_acls`), SCRAM credentials in :attr:`scram_credentials`."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self._groups: GroupsAdmin | None = None
        self._configs: ConfigsAdmin | None = None
        self.acls = AclsAdmin(cluster)
        self.create_acls = self.acls.create_acls
        self.describe_acls = self.acls.describe_acls
        self.delete_acls = self.acls.delete_acls
        self._scram: ScramCredentialsAdmin | None = None

    @property
    def groups(self) -> GroupsAdmin:
        """List, describe and delete consumer groups (:class:`.groups_admin.GroupsAdmin`)."""
        if self._groups is None:
            self._groups = GroupsAdmin(self.cluster)
        return self._groups

    @property
    def configs(self) -> ConfigsAdmin:
        """Describe and change configuration (:class:`.configs_admin.ConfigsAdmin`)."""
        if self._configs is None:
            self._configs = ConfigsAdmin(self.cluster)
        return self._configs

    @property
    def scram_credentials(self) -> ScramCredentialsAdmin:
        """Describe and alter users' SCRAM credentials
        (:class:`.scram_admin.ScramCredentialsAdmin`)."""
        if self._scram is None:
            self._scram = ScramCredentialsAdmin(self.cluster)
        return self._scram

    # -- topics ---------------------------------------------------------------------------------

    def create_topics(self, topics: Iterable[NewTopic | tuple], *, exist_ok: bool = False,
                      validate_only: bool = False, wait: bool = True) -> None:
        """Create topics; raises the error of the first topic that failed (e.g.
        :class:`TopicAlreadyExistsError`, unless ``exist_ok``)."""
        wanted = {t.name: t for t in map(NewTopic.of, topics)}
        deadline = self.cluster.deadline()
        pending, attempted = dict(wanted), set[str]()

        def body(version: int) -> dict:
            return {"topics": [
                {"name": t.name, "num_partitions": t.num_partitions,
                 "replication_factor": t.replication_factor, "assignments": [],
                 "configs": [{"name": k, "value": v} for k, v in t.configs.items()]}
                for t in pending.values()],
                "timeout_ms": _broker_timeout(deadline), "validate_only": validate_only}

        def attempt() -> None:
            previous = set(attempted)
            attempted.update(pending)
            _, response = self.cluster.request_controller(ApiKey.CREATE_TOPICS, body, deadline)
            results = {r["name"]: (r["error_code"], r.get("error_message"))
                       for r in response["topics"]}
            self._settle(pending, previous, results, done_code=ErrorCode.TOPIC_ALREADY_EXISTS,
                         done_anyway=exist_ok)

        retry(f"create_topics({sorted(wanted)})", deadline, self.cluster.backoff(), attempt,
              self.cluster.on_retriable)
        if wait and not validate_only:
            self._wait_for(deadline, f"topics {sorted(wanted)} to have leaders",
                           lambda: self._have_leaders(wanted, deadline))

    def delete_topics(self, names: Iterable[str], *, missing_ok: bool = False,
                      wait: bool = True) -> None:
        """Delete topics; raises :class:`UnknownTopicOrPartitionError` for a missing one
        unless ``missing_ok``."""
        names = list(dict.fromkeys(names))
        deadline = self.cluster.deadline()
        pending, attempted = dict.fromkeys(names), set[str]()

        def body(version: int) -> dict:
            if version >= FIRST_DELETE_BY_STATE:
                return {"topics": [{"name": n, "topic_id": ZERO_UUID} for n in pending],
                        "timeout_ms": _broker_timeout(deadline)}
            return {"topic_names": list(pending), "timeout_ms": _broker_timeout(deadline)}

        def attempt() -> None:
            previous = set(attempted)
            attempted.update(pending)
            _, response = self.cluster.request_controller(ApiKey.DELETE_TOPICS, body, deadline)
            results = {r["name"]: (r["error_code"], r.get("error_message"))
                       for r in response["responses"]}
            self._settle(pending, previous, results,
                         done_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, done_anyway=missing_ok)

        retry(f"delete_topics({names})", deadline, self.cluster.backoff(), attempt,
              self.cluster.on_retriable)
        if wait:
            self._wait_for(deadline, f"topics {names} to be gone",
                           lambda: not set(names) & set(self._fresh(names, deadline)))

    def create_partitions(self, counts: dict[str, int], *, wait: bool = True) -> None:
        """Grow topics to ``counts[name]`` partitions in total."""
        deadline = self.cluster.deadline()
        pending, attempted = dict(counts), set[str]()

        def body(version: int) -> dict:
            return {"topics": [{"name": n, "count": c, "assignments": None}
                               for n, c in pending.items()],
                    "timeout_ms": _broker_timeout(deadline), "validate_only": False}

        def attempt() -> None:
            previous = set(attempted)
            attempted.update(pending)
            _, response = self.cluster.request_controller(ApiKey.CREATE_PARTITIONS, body,
                                                          deadline)
            results = {r["name"]: (r["error_code"], r.get("error_message"))
                       for r in response["results"]}
            retried = {name for name in previous if results.get(name, (0,))[0]}
            if retried:  # a lost answer may have hidden a success: check before failing
                current = self._fresh(retried, deadline)
                for name in retried:
                    if name in current and current[name].partition_count >= counts[name]:
                        results[name] = (0, None)
            self._settle(pending, previous, results, done_code=None, done_anyway=False)

        retry(f"create_partitions({counts})", deadline, self.cluster.backoff(), attempt,
              self.cluster.on_retriable)
        if wait:
            self._wait_for(deadline, f"partitions of {sorted(counts)}",
                           lambda: self._have_leaders(counts, deadline))

    def _settle(self, pending: dict, previous: set, results: dict[str, tuple[int, str | None]],
                *, done_code: int | None, done_anyway: bool) -> None:
        """Drop the topics that are done from ``pending``; raise the first final error, or a
        retriable one when some topics must be retried. ``done_code`` (the topic exists /
        is gone) means done with ``done_anyway``, or for topics sent by an earlier attempt
        (``previous``), whose answer may have been lost."""
        retriable = None
        for name in list(pending):
            code, message = results.get(name, (ErrorCode.UNKNOWN_SERVER_ERROR,
                                               "no result for this topic"))
            if code == 0 or (code == done_code and (done_anyway or name in previous)):
                del pending[name]
                continue
            error = error_of(code, message, where=f"topic {name}")
            if code == done_code or not error.retriable:
                raise final_error(error)
            retriable = retriable or error
        if retriable is not None:
            raise retriable

    # -- reading --------------------------------------------------------------------------------

    def list_topics(self, include_internal: bool = False) -> dict[str, int]:
        """Every topic, with its partition count."""
        return self.cluster.list_topics(include_internal)

    def describe_topics(self, names: Iterable[str]) -> dict[str, TopicMetadata]:
        """The metadata of each topic (partitions, leaders, replicas, topic id)."""
        names = list(dict.fromkeys(names))
        found = self._fresh(names)
        for name in names:
            if name not in found:
                raise final_error(UnknownTopicOrPartitionError(
                    f"UNKNOWN_TOPIC_OR_PARTITION for topic {name}: the topic does not exist",
                    where=f"topic {name}"))
        return {name: found[name] for name in names}

    def describe_configs(self, topic: str) -> dict[str, str | None]:
        """The configuration of a topic: every setting, overrides and broker defaults."""
        deadline = self.cluster.deadline()
        body = {"resources": [{"resource_type": TOPIC_RESOURCE, "resource_name": topic,
                               "configuration_keys": None}],
                "include_synonyms": False, "include_documentation": False}

        def attempt() -> dict[str, str | None]:
            _, response = self.cluster.request_any(ApiKey.DESCRIBE_CONFIGS, body, deadline)
            result = response["results"][0]
            error = error_for(result["error_code"], result.get("error_message"),
                              where=f"topic {topic}")
            if error is not None:
                raise error
            return {c["name"]: c["value"] for c in result["configs"]}

        return retry(f"describe_configs({topic!r})", deadline, self.cluster.backoff(), attempt,
                     self.cluster.on_retriable)

    # -- helpers --------------------------------------------------------------------------------

    def _fresh(self, names: Iterable[str],
               deadline: Deadline | None = None) -> dict[str, TopicMetadata]:
        """The topics of ``names`` that exist, from a metadata request made now."""
        deadline = deadline or self.cluster.deadline()
        names = set(names)
        snapshot = retry("metadata", deadline, self.cluster.backoff(),
                         lambda: self.cluster.refresh_metadata(names, deadline),
                         self.cluster.on_retriable)
        return {n: t for n, t in snapshot.topics.items() if n in names}

    def _have_leaders(self, wanted: dict, deadline: Deadline) -> bool:
        topics = self._fresh(wanted, deadline)
        for name, spec in wanted.items():
            topic = topics.get(name)
            count = spec if isinstance(spec, int) else spec.num_partitions
            if topic is None or topic.error_code or (count > 0 and topic.partition_count < count):
                return False
            if not topic.partitions or any(p.leader < 0 for p in topic.partitions.values()):
                return False
        return True

    def _wait_for(self, deadline: Deadline, what: str, done) -> None:
        def attempt() -> None:
            if not done():
                raise LeaderNotAvailableError(f"waiting for {what} in the cluster metadata")

        retry(f"waiting for {what}", deadline, self.cluster.backoff(), attempt)


def _broker_timeout(deadline: Deadline) -> int:
    return max(int(deadline.remaining_s() * 1000) - _ANSWER_MARGIN_MS, 1)

