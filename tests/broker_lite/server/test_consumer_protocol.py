"""The consumer group protocol (KIP-848) with a real client nobody here wrote: confluent-kafka
with ``group.protocol=consumer`` (librdkafka) against broker_lite over real sockets.

Members join, leave and crash while the others go on consuming their partitions (no
stop-the-world rebalance: the test measures the gaps); a regular-expression subscription picks
up a topic created later; commits carry member epochs and a stale member's is refused; bad
input gets Kafka's error code while other groups carry on; a restarted broker recovers the
group from ``__consumer_offsets``; ListGroups filters by type and state; a classic group is
upgraded online to a consumer group and back; ``broker-lite consumer-groups`` shows both kinds.
"""

import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.common.tiers import needs
from broker_lite.local.rebalance_probe import (
    ChildMember,
    SteadyProducer,
    Watched,
    assigned,
    poll_until,
)
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.server.broker import Broker
from broker_lite.server.testing import bootstrap, call, start_brokers, stop_brokers
from broker_lite.tools.testing import run_tool
from broker_lite.zk.testing import wait_until

PARTITIONS = 6
SESSION_TIMEOUT_MS = 3000
PROPERTIES = {
    "offsets.topic.num.partitions": "3",
    "num.partitions": str(PARTITIONS),
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.session.timeout.ms": str(SESSION_TIMEOUT_MS),
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.heartbeat.interval.ms": "300",
    "group.consumer.max.size": "3",
}


@pytest.fixture
@needs("broker", "zookeeper")
def broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers
    stop_brokers(brokers)


def create_topics(servers: str, *topics: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": servers})
    futures = admin.create_topics([NewTopic(t, partitions, 1) for t in topics],
                                  operation_timeout=30)
    for future in futures.values():
        future.result(60)


def consumer(servers: str, group: str, **overrides) -> Consumer:
    return Consumer({"bootstrap.servers": servers, "group.id": group,
                     "group.protocol": "consumer", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "topic.metadata.refresh.interval.ms": 500,
                     "log_level": 3, **overrides})


def test_members_join_leave_and_crash_while_the_others_keep_consuming(broker):
    """Three members split six partitions; one leaves, one is killed (SIGKILL: only its
    session can end it). The member that stays never loses a partition it had, and never
    stops receiving their records: the longest silence of each of them, with a record
    produced to it every 50 ms, stays far below the time the group took to settle."""
    servers = bootstrap(broker)
    topic, group = "steady", f"g-{uuid.uuid4().hex[:8]}"
    create_topics(servers, topic)
    stays, leaves = Watched(consumer(servers, group)), Watched(consumer(servers, group))
    crashes = ChildMember({"bootstrap.servers": servers, "group.id": group,
                           "group.protocol": "consumer", "log_level": 3}, topic)
    try:
        with SteadyProducer(servers, topic, PARTITIONS):
            for w in (stays, leaves):
                w.consumer.subscribe([topic])
            poll_until([stays, leaves], lambda: len(assigned(stays.consumer)) == 2
                       and len(assigned(leaves.consumer)) == 2, 60, "three members split six")
            kept = {p for _, p in assigned(stays.consumer)}
            start = time.monotonic()
            poll_until([stays], lambda: time.monotonic() - start > 1, 5, "a steady second")
            leaves.consumer.close()  # leaves with epoch -1
            left_at = time.monotonic()
            poll_until([stays], lambda: len(assigned(stays.consumer)) == 3, 30,
                       "the leaver's partitions are shared")
            crashes.kill()  # SIGKILL
            killed_at = time.monotonic()
            poll_until([stays], lambda: len(assigned(stays.consumer)) == PARTITIONS, 30,
                       "the crashed member's partitions are taken over")
            settled_at = time.monotonic()
            poll_until([stays], lambda: time.monotonic() - settled_at > 1, 5, "a last second")
            end = time.monotonic()
        # the crash took the session timeout: a stop-the-world group would stop that long
        assert settled_at - killed_at >= SESSION_TIMEOUT_MS / 1000 * 0.8
        assert all({("steady", p) for p in kept} <= a for a in stays.assignments
                   if len(a) >= 2)  # never revoked
        gaps = {p: stays.max_gap_s(p, start, end) for p in kept}
        assert max(gaps.values()) < 1.5, gaps  # records kept coming throughout
        for p in kept:  # and none was skipped
            offsets = [o for _, o in stays.arrivals[p]]
            assert offsets == list(range(offsets[0], offsets[0] + len(offsets)))
        # every partition got to a member again once the crash was noticed
        taken_over = set(range(PARTITIONS)) - kept
        assert all(any(t > killed_at for t, _ in stays.arrivals.get(p, []))
                   for p in taken_over)
        assert left_at < killed_at < settled_at
    finally:
        crashes.kill()
        stays.consumer.close()


def test_a_regex_subscription_picks_up_a_topic_created_later(broker):
    servers = bootstrap(broker)
    create_topics(servers, "rx-first", "not-rx", partitions=1)
    c = Watched(consumer(servers, f"rx-{uuid.uuid4().hex[:8]}"))
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    try:
        c.consumer.subscribe(["^rx-.*"])  # librdkafka hands the pattern to the broker
        poll_until([c], lambda: assigned(c.consumer) == {("rx-first", 0)}, 60,
                   "the matching topic is assigned")
        create_topics(servers, "rx-later", partitions=2)
        producer.produce("rx-later", b"late", partition=1)
        producer.produce("not-rx", b"never", partition=0)
        producer.flush(10)
        poll_until([c], lambda: assigned(c.consumer) == {
            ("rx-first", 0), ("rx-later", 0), ("rx-later", 1)}, 60,
            "the topic created later is assigned")
        poll_until([c], lambda: 1 in c.arrivals, 30, "its record is consumed")
        assert ("not-rx", 0) not in set().union(*c.assignments)
    finally:
        c.consumer.close()


def describe(port: int, group: str) -> dict:
    return call(port, ApiKey.CONSUMER_GROUP_DESCRIBE, 1,
                {"group_ids": [group], "include_authorized_operations": False})["groups"][0]


def commit(port: int, group: str, member_id: str, epoch: int, topic: str,
           offset: int = 1) -> int:
    response = call(port, ApiKey.OFFSET_COMMIT, 9, {
        "group_id": group, "generation_id_or_member_epoch": epoch, "member_id": member_id,
        "group_instance_id": None, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
             "committed_metadata": ""}]}]})
    return response["topics"][0]["partitions"][0]["error_code"]


def test_commits_carry_member_epochs_and_a_stale_members_is_refused(broker):
    servers, port = bootstrap(broker), broker[0].port
    create_topics(servers, "epochs", partitions=2)
    group = f"e-{uuid.uuid4().hex[:8]}"
    first = Watched(consumer(servers, group))
    second = None
    try:
        first.consumer.subscribe(["epochs"])
        poll_until([first], lambda: len(assigned(first.consumer)) == 2, 60, "first assigned")
        (member,) = describe(port, group)["members"]
        member_id, epoch = member["member_id"], member["member_epoch"]
        assert commit(port, group, member_id, epoch, "epochs", 5) == ErrorCode.NONE
        # the client's own commit carries its epoch too, and is read back
        first.consumer.commit(offsets=[TopicPartition("epochs", 1, 3)], asynchronous=False)
        (read_back,) = first.consumer.committed([TopicPartition("epochs", 1)], timeout=10)
        assert read_back.offset == 3
        assert commit(port, group, "not-a-member", epoch, "epochs") == \
            ErrorCode.UNKNOWN_MEMBER_ID
        assert commit(port, group, "", -1, "epochs") == ErrorCode.UNKNOWN_MEMBER_ID
        # a second member joins: the group moves on, and the first's old epoch is stale
        second = Watched(consumer(servers, group))
        second.consumer.subscribe(["epochs"])
        poll_until([first, second], lambda: len(assigned(second.consumer)) == 1, 60,
                   "the second member gets a partition")
        now = {m["member_id"]: m["member_epoch"] for m in describe(port, group)["members"]}
        assert now[member_id] > epoch
        assert commit(port, group, member_id, epoch, "epochs") == ErrorCode.STALE_MEMBER_EPOCH
        fetched = call(port, ApiKey.OFFSET_FETCH, 9, {"groups": [{
            "group_id": group, "member_id": member_id, "member_epoch": epoch,
            "topics": None}], "require_stable": False})["groups"][0]
        assert fetched["error_code"] == ErrorCode.STALE_MEMBER_EPOCH
        assert commit(port, group, member_id, now[member_id], "epochs", 7) == ErrorCode.NONE
        fetched = call(port, ApiKey.OFFSET_FETCH, 9, {"groups": [{
            "group_id": group, "member_id": member_id, "member_epoch": now[member_id],
            "topics": [{"name": "epochs", "partition_indexes": [0]}]}],
            "require_stable": False})["groups"][0]
        assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 7
    finally:
        first.consumer.close()
        if second is not None:
            second.consumer.close()


def heartbeat(port: int, group: str, member_id: str, epoch: int, **fields) -> dict:
    body = {"group_id": group, "member_id": member_id, "member_epoch": epoch,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": ["bad-input"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": [], **fields}
    return call(port, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, body)


def test_bad_input_gets_kafkas_error_codes_while_other_groups_carry_on(broker):
    servers, port = bootstrap(broker), broker[0].port
    create_topics(servers, "bad-input", partitions=1)
    healthy_group = f"ok-{uuid.uuid4().hex[:8]}"
    healthy = Watched(consumer(servers, healthy_group))
    client_errors: list[KafkaError] = []
    refused_client = consumer(servers, f"bad-{uuid.uuid4().hex[:8]}",
                              **{"group.remote.assignor": "sticky",
                                 "error_cb": client_errors.append})
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    try:
        healthy.consumer.subscribe(["bad-input"])
        poll_until([healthy], lambda: assigned(healthy.consumer), 60, "healthy assigned")
        healthy_before = describe(port, healthy_group)
        bad = f"bad-{uuid.uuid4().hex[:8]}"
        assert heartbeat(port, bad, "m1", 0, server_assignor="sticky")["error_code"] == \
            ErrorCode.UNSUPPORTED_ASSIGNOR
        assert heartbeat(port, bad, "m1", 0, subscribed_topic_names=None,
                         subscribed_topic_regex="(?=x).*")["error_code"] == \
            ErrorCode.INVALID_REGULAR_EXPRESSION
        assert heartbeat(port, bad, "m1", -3)["error_code"] == ErrorCode.INVALID_REQUEST
        joined = heartbeat(port, bad, "m1", 0)
        assert (joined["error_code"], joined["member_epoch"]) == (ErrorCode.NONE, 1)
        assert heartbeat(port, bad, "m1", 7, topic_partitions=None)["error_code"] == \
            ErrorCode.FENCED_MEMBER_EPOCH
        assert heartbeat(port, bad, "ghost", 1)["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
        for m in ("m2", "m3"):  # group.consumer.max.size is 3
            assert heartbeat(port, bad, m, 0)["error_code"] == ErrorCode.NONE
        assert heartbeat(port, bad, "m4", 0)["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED
        # a real client asking for an assignor the broker lacks gets the error, fatally
        refused_client.subscribe(["bad-input"])
        def fatal() -> list[KafkaError]:
            return [e for e in client_errors if e.fatal() or e.code() == KafkaError._FATAL]

        deadline = time.monotonic() + 30
        while not fatal() and time.monotonic() < deadline:
            record = refused_client.poll(0.1)
            if record is not None and record.error() is not None:
                client_errors.append(record.error())
        assert fatal() and "assignor" in fatal()[0].str().lower(), client_errors
        # the healthy group never noticed
        polled_before = len(healthy.assignments)
        producer.produce("bad-input", b"after", partition=0)
        producer.flush(10)
        poll_until([healthy], lambda: 0 in healthy.arrivals, 30, "the healthy group reads on")
        assert all(a == {("bad-input", 0)} for a in healthy.assignments[polled_before:])
        healthy_after = describe(port, healthy_group)
        assert (healthy_after["group_epoch"], healthy_after["members"]) == \
            (healthy_before["group_epoch"], healthy_before["members"])
        assert describe(port, bad)["group_state"] in ("Stable", "Reconciling", "Assigning")
    finally:
        healthy.consumer.close()
        refused_client.close()


def test_a_restarted_broker_recovers_the_group(broker):
    servers = bootstrap(broker)
    create_topics(servers, "recovered", partitions=4)
    group = f"r-{uuid.uuid4().hex[:8]}"
    c = Watched(consumer(servers, group))
    try:
        c.consumer.subscribe(["recovered"])
        poll_until([c], lambda: len(assigned(c.consumer)) == 4, 60, "assigned")
        before = describe(broker[0].port, group)
        broker[0].stop()
        broker[0] = Broker(broker[0].config).start()

        def loaded():
            d = describe(broker[0].port, group)
            return d if d["error_code"] == ErrorCode.NONE else None

        after = wait_until(loaded, 30, "the group is loaded again")
        for key in ("group_epoch", "assignment_epoch", "assignor_name"):
            assert after[key] == before[key], key
        assert [(m["member_id"], m["member_epoch"], m["assignment"]) for m in after["members"]] \
            == [(m["member_id"], m["member_epoch"], m["assignment"]) for m in before["members"]]
        # the member heartbeats on with its epoch: never fenced, never reassigned
        poll_until([c], lambda: describe(broker[0].port, group)["group_state"] == "Stable", 30,
                   "the member carries on")
        assert describe(broker[0].port, group)["members"][0]["member_epoch"] == \
            before["members"][0]["member_epoch"]
    finally:
        c.consumer.close()


def test_list_groups_by_type_and_state(broker):
    servers, port = bootstrap(broker), broker[0].port
    create_topics(servers, "listed", partitions=1)
    consumer_group = f"new-{uuid.uuid4().hex[:8]}"
    classic_group = f"old-{uuid.uuid4().hex[:8]}"
    new = Watched(consumer(servers, consumer_group))
    old = Consumer({"bootstrap.servers": servers, "group.id": classic_group,
                    "session.timeout.ms": 6000, "log_level": 3})
    try:
        new.consumer.subscribe(["listed"])
        old.subscribe(["listed"])
        deadline = time.monotonic() + 60
        while not (assigned(new.consumer) or assigned(old)) or not assigned(old):
            assert time.monotonic() < deadline
            new.poll()
            old.poll(0.05)

        def listed(**filters) -> dict[str, tuple[str, str]]:
            body = {"states_filter": [], "types_filter": [], **filters}
            return {g["group_id"]: (g["group_type"], g["group_state"]) for g in
                    call(port, ApiKey.LIST_GROUPS, 5, body)["groups"]}

        wait_until(lambda: listed().get(consumer_group) == ("consumer", "Stable"), 30,
                   "the consumer group is stable")
        assert listed()[classic_group] == ("classic", "Stable")
        assert set(listed(types_filter=["consumer"])) == {consumer_group}
        assert set(listed(types_filter=["Classic"])) == {classic_group}
        assert consumer_group in listed(states_filter=["stable"])
        assert consumer_group not in listed(states_filter=["Empty"])
        described = call(port, ApiKey.DESCRIBE_GROUPS, 5, {
            "groups": [consumer_group], "include_authorized_operations": False})["groups"][0]
        assert described["group_state"] == "Dead"  # DescribeGroups describes classic groups
        assert describe(port, classic_group)["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    finally:
        new.consumer.close()
        old.close()


def classic_consumer(servers: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": servers, "group.id": group,
                     "group.protocol": "classic", "partition.assignment.strategy": "range",
                     "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
                     "auto.offset.reset": "earliest", "log_level": 3})


def owners_never_overlap(members: list[Watched], timeline: list[tuple[float, int, set]]
                         ) -> None:
    """No partition was in two members' assignments at once: for each partition, a member's
    first sample holding it comes after the last sample of the member that held it before."""
    held: dict[int, tuple[int, float]] = {}  # partition -> (member, last sample holding it)
    for moment, index, assignment in timeline:
        for _, p in assignment:
            owner = held.get(p)
            if owner is not None and owner[0] != index:
                previous = [(t, a) for t, i, a in timeline if i == owner[0] and t <= moment]
                still = previous and ("steady", p) in previous[-1][1]
                assert not still, f"partition {p}: member {index} got it at {moment:.3f} " \
                                  f"while member {owner[0]} still had it"
            held[p] = (index, moment)


def list_type(port: int, group: str) -> str | None:
    groups = call(port, ApiKey.LIST_GROUPS, 5, {"states_filter": [],
                                                "types_filter": []})["groups"]
    return next((g["group_type"] for g in groups if g["group_id"] == group), None)


def test_a_classic_group_is_upgraded_online_and_back(broker):
    """Two classic (eager) members consume; a member of the consumer protocol joins the same
    group, which becomes a consumer group without stopping (group.consumer.migration.policy
    bidirectional); when it leaves, the group is classic again. No partition is ever held by
    two members at once, and every record produced is consumed."""
    servers, port = bootstrap(broker), broker[0].port
    topic, group = "steady", f"m-{uuid.uuid4().hex[:8]}"
    create_topics(servers, topic)
    members = [Watched(classic_consumer(servers, group)) for _ in range(2)]
    timeline: list[tuple[float, int, set]] = []

    def poll_all(done, timeout_s: float, message: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"timed out after {timeout_s} s: {message}"
            for index, w in enumerate(members):
                w.poll()
                timeline.append((time.monotonic(), index, w.assignments[-1]))

    def split() -> bool:
        sets = [assigned(w.consumer) for w in members]
        return all(sets) and sum(map(len, sets)) == PARTITIONS and \
            len(set().union(*sets)) == PARTITIONS

    try:
        with SteadyProducer(servers, topic, PARTITIONS) as producer:
            for w in members:
                w.consumer.subscribe([topic])
            poll_all(split, 60, "the classic members split the partitions")
            assert list_type(port, group) == "classic"
            members.append(Watched(consumer(servers, group)))  # group.protocol=consumer
            members[-1].consumer.subscribe([topic])
            # upgraded, and the new member has consumed from its share before it leaves
            poll_all(lambda: split() and list_type(port, group) == "consumer" and
                     bool(members[-1].arrivals), 90,
                     "the group is upgraded and the new member consumes its share")
            members[-1].consumer.close()  # the last consumer-protocol member leaves
            timeline.append((time.monotonic(), len(members) - 1, set()))  # it has nothing
            newcomer = members.pop()
            poll_all(lambda: split() and list_type(port, group) == "classic", 90,
                     "the group is classic again")
            sent = producer.sent
        poll_all(lambda: all(sum(1 for _ in w.arrivals.get(p, [])) for w in members
                             for p in w.partitions()) and
                 all(max(o for _, o in arrivals) >= sent - 1
                     for p in range(PARTITIONS)
                     for arrivals in [[a for w in (*members, newcomer)
                                       for a in w.arrivals.get(p, [])]]), 60,
                 "everything produced is consumed")
        owners_never_overlap(members, timeline)
        assert newcomer.arrivals, "the consumer-protocol member consumed"
    finally:
        for w in members:
            w.consumer.close()


def test_the_consumer_groups_tool_shows_both_kinds(broker):
    servers = bootstrap(broker)
    create_topics(servers, "tooled", partitions=2)
    consumer_group, classic_group = f"tool-new-{uuid.uuid4().hex[:6]}", \
        f"tool-old-{uuid.uuid4().hex[:6]}"
    new = Watched(consumer(servers, consumer_group))
    old = Watched(classic_consumer(servers, classic_group))
    try:
        new.consumer.subscribe(["tooled"])
        old.consumer.subscribe(["tooled"])
        poll_until([new, old], lambda: len(assigned(new.consumer)) == 2
                   and len(assigned(old.consumer)) == 2, 60, "both groups assigned")
        listed = run_tool("consumer-groups", "--bootstrap-server", servers, "--list", "--type")
        rows = {tuple(line.split()) for line in listed.stdout.splitlines()[1:]}
        assert listed.stdout.split()[:2] == ["GROUP", "TYPE"]
        assert {(consumer_group, "consumer"), (classic_group, "classic")} <= rows
        only = run_tool("consumer-groups", "--bootstrap-server", servers, "--list",
                        "--type", "consumer", "--state")
        assert [line.split() for line in only.stdout.splitlines()] == [
            ["GROUP", "TYPE", "STATE"], [consumer_group, "consumer", "Stable"]]
        members = run_tool("consumer-groups", "--bootstrap-server", servers, "--describe",
                           "--group", consumer_group, "--members", "--verbose")
        (row,) = members.stdout.splitlines()[1:]
        assert row.split()[0] == consumer_group and "tooled(0,1)" in row
        state = run_tool("consumer-groups", "--bootstrap-server", servers, "--describe",
                         "--group", consumer_group, "--state")
        assert state.stdout.splitlines()[1].split()[-3:] == ["uniform", "Stable", "1"]
    finally:
        new.consumer.close()
        old.consumer.close()


@pytest.fixture
@needs("broker", "zookeeper")
def three_brokers(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 3, {
        **PROPERTIES, "offsets.topic.replication.factor": "3",
        "replica.lag.time.max.ms": "5000", "controlled.shutdown.retry.backoff.ms": "100"})
    yield brokers
    stop_brokers([b for b in brokers if b.server is not None])


def coordinator_of(brokers, group: str):
    found = call(brokers[0].port, ApiKey.FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
    assert found["error_code"] == ErrorCode.NONE, found
    return next(b for b in brokers if b.port == found["port"])


def test_the_group_moves_with_the_coordinators_leadership(three_brokers):
    """On three brokers, the coordinator's broker stops: the new leader of the group's
    partition of ``__consumer_offsets`` loads the group from the replicated records, and the
    member heartbeats on there with its epoch, keeping its partitions."""
    servers = bootstrap(three_brokers)
    admin = AdminClient({"bootstrap.servers": servers, "log_level": 3})
    admin.create_topics([NewTopic("moving", 3, 3)])["moving"].result(60)
    group = f"move-{uuid.uuid4().hex[:8]}"
    c = Watched(consumer(servers, group))
    try:
        c.consumer.subscribe(["moving"])
        poll_until([c], lambda: len(assigned(c.consumer)) == 3, 90, "assigned")
        old = coordinator_of(three_brokers, group)
        before = describe(old.port, group)
        old.stop()
        rest = [b for b in three_brokers if b is not old]

        def moved():
            new = coordinator_of(rest, group)
            d = describe(new.port, group)
            return (new, d) if new is not old and d["error_code"] == ErrorCode.NONE else None

        new, after = wait_until(moved, 60, "another broker coordinates the group")
        assert (after["group_epoch"], after["assignment_epoch"]) == \
            (before["group_epoch"], before["assignment_epoch"])
        assert [(m["member_id"], m["member_epoch"]) for m in after["members"]] == \
            [(m["member_id"], m["member_epoch"]) for m in before["members"]]
        # past a session timeout: only heartbeats to the new coordinator keep the member in
        moved_at = time.monotonic()
        poll_until([c], lambda: time.monotonic() - moved_at > SESSION_TIMEOUT_MS / 1000 + 1,
                   30, "a session timeout")
        assert len(assigned(c.consumer)) == 3 and describe(new.port, group)["group_state"] == \
            "Stable"
        assert describe(new.port, group)["members"][0]["member_epoch"] == \
            before["members"][0]["member_epoch"]
    finally:
        c.consumer.close()
