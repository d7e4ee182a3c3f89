"""The group coordinator's protocol rules, with a manual timer (time moves only when the test
says) and real partition logs: joins, rebalances, sessions, static members, offsets retention,
deletion, loading and unloading."""

import threading

import pytest
from coordinator_harness import (
    PARTITIONS,
    REBALANCE_MS,
    RETENTION_MS,
    SESSION_MS,
    T0,
    T1,
    Answers,
    Harness,
    group_on,
    subscription,
)

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator import partition_for
from broker_lite.coordinator.group import loader as loader_module
from broker_lite.coordinator.group.coordinator import LeavingMember
from broker_lite.protocol import ErrorCode
from broker_lite.zk.testing import wait_until


@pytest.fixture
def harness(tmp_path):
    harness = Harness(tmp_path).start()
    yield harness
    harness.close()


# -- joining ---------------------------------------------------------------------------------


def test_a_new_member_asks_for_its_id_then_leads_the_first_generation(harness):
    first = harness.join("g", client_id="consumer-1").result
    assert first.error == ErrorCode.MEMBER_ID_REQUIRED
    assert first.member_id.startswith("consumer-1-") and len(first.member_id) == 11 + 36
    joined = harness.join("g", first.member_id, client_id="consumer-1")
    assert joined.pending  # the join phase completes on the timer (delay 0 here)
    harness.advance(0)
    result = joined.result
    assert (result.error, result.generation_id, result.protocol_type, result.protocol_name,
            result.leader_id) == (0, 1, "consumer", "range", first.member_id)
    assert result.members == ((first.member_id, None, subscription("events")),)
    assert harness.state("g") == "CompletingRebalance"
    synced = harness.sync("g", 1, first.member_id, {first.member_id: b"all of it"}).result
    assert (synced.error, synced.assignment, synced.protocol_name) == (0, b"all of it", "range")
    assert harness.state("g") == "Stable"


def test_old_clients_join_without_asking_for_an_id(harness):
    joined = harness.join("g", require_known_member_id=False)
    harness.advance(0)
    assert joined.result.error == ErrorCode.NONE and joined.result.generation_id == 1


def test_two_members_rebalance_and_share_the_assignment(harness):
    ids = harness.stable_group("g", "a")
    b = harness.new_member("g", client_id="b")
    assert b.pending and harness.state("g") == "PreparingRebalance"
    assert harness.heartbeat("g", ids["a"], 1) == ErrorCode.REBALANCE_IN_PROGRESS
    a = harness.join("g", ids["a"], client_id="a")
    assert a.result.generation_id == b.result.generation_id == 2  # all known members joined
    assert a.result.leader_id == ids["a"] and len(a.result.members) == 2 and not b.result.members
    b_id = b.result.member_id
    b_sync = harness.sync("g", 2, b_id)
    assert b_sync.pending  # waits for the leader's assignment
    a_sync = harness.sync("g", 2, ids["a"], {ids["a"]: b"p0", b_id: b"p1"})
    assert (a_sync.result.assignment, b_sync.result.assignment) == (b"p0", b"p1")
    assert harness.state("g") == "Stable"
    stored = harness.records("g").groups["g"]
    assert stored.generation == 2 and stored.protocol == "range"
    assert {m.member_id: m.assignment for m in stored.members} == {ids["a"]: b"p0", b_id: b"p1"}


def test_members_missing_from_the_assignment_get_an_empty_one(harness):
    ids = harness.stable_group("g", "a", "b")
    assert {m.member_id: m.assignment for m in harness.records("g").groups["g"].members} == \
        {ids["a"]: b"a", ids["b"]: b"b"}
    harness.join("g", ids["a"], client_id="a")  # the leader rejoins: a new generation
    b = harness.join("g", ids["b"], client_id="b")
    b_sync = harness.sync("g", 3, ids["b"])
    harness.sync("g", 3, ids["a"], {ids["a"]: b"everything"})
    assert b.result.generation_id == 3 and b_sync.result.assignment == b""


def test_a_member_that_does_not_rejoin_in_time_is_dropped(harness):
    ids = harness.stable_group("g", "a", "b")
    c = harness.new_member("g", client_id="c")
    a = harness.join("g", ids["a"], client_id="a")
    assert a.pending and c.pending
    for _ in range(REBALANCE_MS // 500 - 1):  # b stays alive but never rejoins
        harness.advance(500)
        assert harness.heartbeat("g", ids["b"], 2) == ErrorCode.REBALANCE_IN_PROGRESS
    harness.advance(499)
    assert a.pending
    harness.advance(1)
    assert a.result.generation_id == c.result.generation_id == 3
    assert {m[0] for m in a.result.members} == {ids["a"], c.result.member_id}


def test_a_silent_member_is_removed_after_its_session_timeout(harness):
    ids = harness.stable_group("g", "a", "b")
    for _ in range(2):
        harness.advance(400)
        assert harness.heartbeat("g", ids["a"], 2) == ErrorCode.NONE
    assert harness.state("g") == "Stable"
    harness.advance(200)
    assert harness.state("g") == "PreparingRebalance"  # b's session ended
    assert harness.heartbeat("g", ids["b"], 2) == ErrorCode.UNKNOWN_MEMBER_ID
    assert harness.heartbeat("g", ids["a"], 2) == ErrorCode.REBALANCE_IN_PROGRESS
    a = harness.join("g", ids["a"], client_id="a")
    assert a.result.generation_id == 3 and [m[0] for m in a.result.members] == [ids["a"]]


def test_members_waiting_in_a_rebalance_are_not_expired(harness):
    ids = harness.stable_group("g", "a", "b")
    a = harness.join("g", ids["a"], client_id="a")  # the leader starts a rebalance
    harness.advance(SESSION_MS * 3)  # a waits without heartbeats; b's session ends
    assert a.result.generation_id == 3 and [m[0] for m in a.result.members] == [ids["a"]]


def test_a_new_group_waits_the_initial_delay_for_more_members(tmp_path):
    harness = Harness(tmp_path, initial_rebalance_delay_ms=300).start()
    try:
        a = harness.new_member("g", client_id="a")
        harness.advance(200)
        b = harness.new_member("g", client_id="b")
        harness.advance(100)
        assert a.pending and b.pending  # b arrived: the delay starts again
        harness.advance(299)
        assert a.pending
        harness.advance(1)
        assert a.result.generation_id == b.result.generation_id == 1
        assert len(a.result.members) == 2
    finally:
        harness.close()


def test_a_member_id_never_used_is_forgotten_after_the_session_timeout(harness):
    first = harness.join("g").result
    harness.advance(SESSION_MS)
    late = harness.join("g", first.member_id).result
    assert late.error == ErrorCode.UNKNOWN_MEMBER_ID


def test_leader_and_changed_metadata_rejoin_start_a_rebalance_but_a_plain_follower_does_not(
        harness):
    ids = harness.stable_group("g", "a", "b")
    follower = harness.join("g", ids["b"], client_id="b").result
    assert (follower.error, follower.generation_id, follower.members) == (0, 2, ())
    assert harness.state("g") == "Stable"
    changed = harness.join("g", ids["b"], client_id="b",
                           protocols=[("range", subscription("events", "more"))])
    assert changed.pending and harness.state("g") == "PreparingRebalance"


@pytest.mark.parametrize("case,kwargs,error", [
    ("session too short", {"session_ms": 99}, ErrorCode.INVALID_SESSION_TIMEOUT),
    ("session too long", {"session_ms": 30_001}, ErrorCode.INVALID_SESSION_TIMEOUT),
    ("no protocol type", {"protocol_type": ""}, ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
    ("no protocols", {"protocols": []}, ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
    ("an unknown member of an unknown group", {"member_id": "ghost"}, ErrorCode.UNKNOWN_MEMBER_ID),
])
def test_join_errors_on_a_new_group(harness, case, kwargs, error):
    assert harness.join("new-group", **kwargs).result.error == error, case


@pytest.mark.parametrize("case,kwargs,error", [
    ("another protocol type", {"protocol_type": "connect"}, ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
    ("no protocol in common", {"protocols": [("roundrobin", b"")]},
     ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
    ("an unknown member id", {"member_id": "ghost"}, ErrorCode.UNKNOWN_MEMBER_ID),
])
def test_join_errors_on_an_existing_group(harness, case, kwargs, error):
    harness.stable_group("g", "a")
    assert harness.join("g", **kwargs).result.error == error, case


@pytest.mark.parametrize("group_id,error", [("", ErrorCode.INVALID_GROUP_ID),
                                            (None, ErrorCode.INVALID_GROUP_ID)])
def test_group_ids_must_be_given(harness, group_id, error):
    assert harness.join(group_id).result.error == error
    assert harness.heartbeat(group_id, "m", 1) == error


def test_groups_of_partitions_not_led_here_are_refused(harness):
    group = group_on(1)
    harness.coordinator.on_resigned(1, 1)
    wait_until(lambda: 1 not in harness.coordinator.manager.owned_partitions())
    assert harness.join(group).result.error == ErrorCode.NOT_COORDINATOR
    assert harness.heartbeat(group, "m", 1) == ErrorCode.NOT_COORDINATOR
    assert harness.commit(group, {T0: 1}) == {T0: ErrorCode.NOT_COORDINATOR}
    assert harness.coordinator.handle_fetch_offsets(group, None)[0] == ErrorCode.NOT_COORDINATOR


def test_group_max_size(tmp_path):
    harness = Harness(tmp_path, max_size=2).start()
    try:
        harness.stable_group("g", "a", "b")
        refused = harness.join("g").result
        assert refused.error == ErrorCode.GROUP_MAX_SIZE_REACHED and refused.member_id == ""
    finally:
        harness.close()


def test_malformed_protocol_metadata_is_carried_not_parsed(harness):
    garbage = b"\xff\xff\x00\x00\x7f"
    joined = harness.new_member("g", protocols=[("range", garbage)])
    harness.advance(0)
    assert joined.result.members[0][2] == garbage
    member_id = joined.result.member_id
    harness.sync("g", 1, member_id, {member_id: b"x"})
    # the subscription is unknown: every topic counts as subscribed
    error, errors = harness.coordinator.handle_delete_offsets("g", [T0])
    assert (error, errors) == (ErrorCode.NONE, {T0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC})


# -- SyncGroup and Heartbeat -----------------------------------------------------------------


def test_sync_and_heartbeat_errors(harness):
    ids = harness.stable_group("g", "a")
    assert harness.sync("g", 7, ids["a"]).result.error == ErrorCode.ILLEGAL_GENERATION
    assert harness.sync("g", 1, "ghost").result.error == ErrorCode.UNKNOWN_MEMBER_ID
    assert harness.sync("unknown", 1, "ghost").result.error == ErrorCode.UNKNOWN_MEMBER_ID
    answers = Answers()
    harness.coordinator.handle_sync_group("g", 1, ids["a"], "connect", None, None, {},
                                          answers.append)
    assert answers.result.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert harness.sync("g", 1, ids["a"]).result.assignment == b"a"  # Stable: the assignment
    assert harness.heartbeat("g", ids["a"], 0) == ErrorCode.ILLEGAL_GENERATION
    assert harness.heartbeat("g", "ghost", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert harness.heartbeat("unknown", "ghost", 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_during_a_join_phase_is_told_to_rejoin(harness):
    ids = harness.stable_group("g", "a", "b")
    harness.join("g", ids["a"], client_id="a")
    assert harness.sync("g", 2, ids["b"]).result.error == ErrorCode.REBALANCE_IN_PROGRESS


def test_members_that_never_sync_are_removed(harness):
    ids = harness.stable_group("g", "a", "b", session_ms=3 * REBALANCE_MS)
    a = harness.join("g", ids["a"], client_id="a")
    harness.join("g", ids["b"], client_id="b")
    generation = a.result.generation_id
    harness.sync("g", generation, ids["a"], {ids["a"]: b"x", ids["b"]: b"y"})
    assert harness.state("g") == "Stable"
    harness.advance(REBALANCE_MS)  # b never sent its SyncGroup
    assert harness.state("g") == "PreparingRebalance"
    assert harness.heartbeat("g", ids["b"], generation) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_pending_sync_is_answered_when_a_rebalance_starts(harness):
    ids = harness.stable_group("g", "a", "b")
    harness.join("g", ids["a"], client_id="a")
    harness.join("g", ids["b"], client_id="b")
    b_sync = harness.sync("g", 3, ids["b"])
    harness.new_member("g", client_id="c")  # before the leader's assignment
    assert b_sync.result.error == ErrorCode.REBALANCE_IN_PROGRESS


# -- LeaveGroup ------------------------------------------------------------------------------


def test_leave_group_in_a_batch(harness):
    ids = harness.stable_group("g", "a", "b")
    harness.advance(0)
    static = harness.join("g", instance="i-c", client_id="c")
    harness.join("g", ids["a"], client_id="a")
    harness.join("g", ids["b"], client_id="b")
    harness.sync("g", 3, ids["a"], {})
    assert harness.state("g") == "Stable"
    error, members = harness.coordinator.handle_leave_group("g", [
        LeavingMember(ids["a"]), LeavingMember("ghost"), LeavingMember("", "i-c"),
        LeavingMember("", "no-such-instance")])
    assert error == ErrorCode.NONE
    assert [e for _, e in members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID,
                                       ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    assert static.result.member_id.startswith("i-c-")
    assert harness.state("g") == "PreparingRebalance"
    b = harness.join("g", ids["b"], client_id="b")
    assert [m[0] for m in b.result.members] == [ids["b"]]


def test_the_last_member_leaving_empties_the_group(harness):
    ids = harness.stable_group("g", "a")
    assert harness.coordinator.handle_leave_group("g", [LeavingMember(ids["a"])])[1][0][1] == 0
    assert harness.state("g") == "Empty"
    assert harness.records("g").groups["g"].members == ()  # the empty generation is stored
    error, members = harness.coordinator.handle_leave_group("unknown", [LeavingMember("x")])
    assert (error, [e for _, e in members]) == (ErrorCode.NONE, [ErrorCode.UNKNOWN_MEMBER_ID])


# -- static membership -----------------------------------------------------------------------


def test_a_static_member_returning_with_a_new_id_fences_the_old_one(harness):
    a = harness.join("g", instance="i-a", client_id="a")
    harness.advance(0)
    old_id = a.result.member_id
    assert old_id.startswith("i-a-")
    harness.sync("g", 1, old_id, {old_id: b"p0"})
    harness.commit("g", {T0: 5}, old_id, 1, "i-a")
    back = harness.join("g", instance="i-a", client_id="a").result
    assert back.error == ErrorCode.NONE and back.member_id != old_id
    assert (back.generation_id, back.leader_id, back.members) == (1, old_id, ())  # no rebalance
    assert harness.state("g") == "Stable"
    assert harness.heartbeat("g", old_id, 1, "i-a") == ErrorCode.FENCED_INSTANCE_ID
    assert harness.commit("g", {T0: 6}, old_id, 1, "i-a") == {T0: ErrorCode.FENCED_INSTANCE_ID}
    assert harness.heartbeat("g", back.member_id, 1, "i-a") == ErrorCode.NONE
    assert harness.sync("g", 1, back.member_id, instance="i-a").result.assignment == b"p0"
    stored = harness.records("g").groups["g"]
    assert [(m.member_id, m.group_instance_id) for m in stored.members] == \
        [(back.member_id, "i-a")]


def test_a_static_leader_rejoining_on_v9_is_told_to_skip_the_assignment(harness):
    a = harness.join("g", instance="i-a")
    harness.advance(0)
    harness.sync("g", 1, a.result.member_id, {a.result.member_id: b"p0"})
    back = harness.join("g", instance="i-a", skip=True).result
    assert back.skip_assignment and back.leader_id == back.member_id and len(back.members) == 1


def test_an_unknown_static_instance_is_refused(harness):
    ids = harness.stable_group("g", "a")
    assert harness.heartbeat("g", ids["a"], 1, "unknown-instance") == ErrorCode.UNKNOWN_MEMBER_ID


# -- offsets retention -------------------------------------------------------------------


def test_offsets_of_a_standalone_group_expire_after_the_retention(harness):
    harness.commit("solo", {T0: 1})
    harness.advance(RETENTION_MS / 2)
    harness.commit("solo", {T1: 2})
    harness.advance(RETENTION_MS / 2)  # the expiry check runs every 10 s
    assert harness.fetch("solo") == {T1: 2}
    harness.advance(RETENTION_MS / 2)
    assert harness.fetch("solo") == {}
    assert harness.state("solo") == "Dead"  # empty, without offsets: gone
    assert harness.records("solo").offsets == {}  # tombstones written


def test_offsets_of_an_empty_group_expire_after_it_became_empty(harness):
    ids = harness.stable_group("g", "a")
    harness.commit("g", {T0: 1}, ids["a"], 1)
    for _ in range(2 * RETENTION_MS // 500):  # a live member: nothing expires
        harness.advance(500)
        assert harness.heartbeat("g", ids["a"], 1) == ErrorCode.NONE
    assert harness.fetch("g") == {T0: 1}
    harness.coordinator.handle_leave_group("g", [LeavingMember(ids["a"])])
    harness.advance(RETENTION_MS - 10_000)
    assert harness.fetch("g") == {T0: 1}
    harness.advance(10_000)
    assert harness.fetch("g") == {}
    loaded = harness.records("g")
    assert loaded.offsets == {} and "g" in loaded.removed_groups


def test_a_stable_consumer_group_keeps_the_offsets_of_subscribed_topics(harness):
    ids = harness.stable_group("g", "a")  # subscribed to "events"
    other = TopicPartition("other", 0)
    harness.commit("g", {T0: 1, other: 2}, ids["a"], 1)
    for _ in range(2 * RETENTION_MS // (SESSION_MS // 2)):
        harness.heartbeat("g", ids["a"], 1)
        harness.advance(SESSION_MS // 2)
    assert harness.fetch("g") == {T0: 1}


# -- listing, describing, deleting -----------------------------------------------------------


def test_list_and_describe(harness):
    harness.stable_group("stable", "a")
    harness.commit("solo", {T0: 1})
    error, groups = harness.coordinator.handle_list_groups()
    assert error == ErrorCode.NONE
    assert [(g.group_id, g.protocol_type, g.state) for g in groups] == [
        ("solo", "", "Empty"), ("stable", "consumer", "Stable")]
    assert [g.group_id for g in harness.coordinator.handle_list_groups(["stable"])[1]] == \
        ["stable"]
    assert harness.coordinator.handle_list_groups(["empty"], ["CLASSIC"])[1][0].group_id == "solo"
    assert harness.coordinator.handle_list_groups([], ["consumer"])[1] == []
    error, summary = harness.coordinator.handle_describe_group("stable")
    assert (summary.state, summary.protocol_type, summary.protocol) == \
        ("Stable", "consumer", "range")
    assert [(m.client_id, m.client_host, m.metadata, m.assignment) for m in summary.members] == \
        [("a", "/127.0.0.1", subscription("events"), b"a")]
    assert harness.coordinator.handle_describe_group("unknown")[1].state == "Dead"


def test_delete_groups(harness):
    harness.stable_group("stable", "a")
    harness.commit("solo", {T0: 1, T1: 2})
    errors = harness.coordinator.handle_delete_groups(["stable", "solo", "unknown"])
    assert errors == {"stable": ErrorCode.NON_EMPTY_GROUP, "solo": ErrorCode.NONE,
                      "unknown": ErrorCode.GROUP_ID_NOT_FOUND}
    assert harness.fetch("solo") == {} and harness.state("solo") == "Dead"
    assert harness.records("solo").offsets == {}
    assert harness.coordinator.handle_delete_groups(["solo"]) == \
        {"solo": ErrorCode.GROUP_ID_NOT_FOUND}


def test_deleting_a_group_that_rebalanced_writes_its_tombstone(harness):
    ids = harness.stable_group("g", "a")
    harness.commit("g", {T0: 1}, ids["a"], 1)
    harness.coordinator.handle_leave_group("g", [LeavingMember(ids["a"])])
    assert harness.coordinator.handle_delete_groups(["g"]) == {"g": ErrorCode.NONE}
    loaded = harness.records("g")
    assert loaded.offsets == {} and loaded.groups == {} and "g" in loaded.removed_groups


# -- loading and unloading -------------------------------------------------------------------


def test_a_new_coordinator_loads_groups_and_offsets_from_the_log(tmp_path):
    first = Harness(tmp_path).start()
    ids = first.stable_group("g", "a", "b")
    first.commit("g", {T0: 11}, ids["a"], 2)
    first.commit("solo", {T1: 22})
    first.coordinator.shutdown()
    second = Harness(tmp_path, logs=first.logs).start()
    try:
        assert second.fetch("g") == {T0: 11} and second.fetch("solo") == {T1: 22}
        assert second.state("g") == "Stable" and second.state("solo") == "Empty"
        assert second.heartbeat("g", ids["a"], 2) == ErrorCode.NONE
        assert second.sync("g", 2, ids["b"]).result.assignment == b"b"
        second.advance(SESSION_MS // 2)  # members of the loaded group must keep heartbeating
        assert second.heartbeat("g", ids["a"], 2) == ErrorCode.NONE
        second.advance(SESSION_MS // 2)
        assert second.state("g") == "PreparingRebalance"
        assert second.heartbeat("g", ids["b"], 2) == ErrorCode.UNKNOWN_MEMBER_ID
    finally:
        second.close()


def test_requests_during_a_load_answer_load_in_progress(tmp_path, monkeypatch):
    release, loading = threading.Event(), threading.Event()
    real_load = loader_module.load_partition

    def held_load(log, **kwargs):
        loading.set()
        assert release.wait(10)
        return real_load(log, **kwargs)

    monkeypatch.setattr(loader_module, "load_partition", held_load)
    harness = Harness(tmp_path).start(wait=False)
    try:
        assert loading.wait(10)
        group = group_on(0)  # partition 0 loads first and is held
        assert harness.join(group).result.error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert harness.commit(group, {T0: 1}) == {T0: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
        assert harness.coordinator.handle_fetch_offsets(group, None)[0] == \
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert harness.heartbeat(group, "m", 1) == ErrorCode.NONE  # answered blindly
        assert harness.sync(group, 1, "m").result.error == ErrorCode.REBALANCE_IN_PROGRESS
        assert harness.coordinator.handle_list_groups()[0] == \
            ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        release.set()
        wait_until(lambda: harness.coordinator.manager.owned_partitions() == harness.led)
        assert harness.commit(group, {T0: 1}) == {T0: ErrorCode.NONE}
    finally:
        release.set()
        harness.close()


def test_resigning_answers_waiting_joins_and_drops_the_groups(harness):
    ids = harness.stable_group("g", "a", "b")
    waiting = harness.join("g", ids["a"], client_id="a")
    partition = partition_for("g", PARTITIONS)
    harness.coordinator.on_resigned(partition, 1)
    wait_until(lambda: partition not in harness.coordinator.manager.owned_partitions())
    assert waiting.result.error == ErrorCode.NOT_COORDINATOR
    harness.led.discard(partition)
    assert harness.heartbeat("g", ids["b"], 2) == ErrorCode.NOT_COORDINATOR
    harness.coordinator.on_elected(partition, 2)  # elected again: the log is loaded again
    harness.led.add(partition)
    wait_until(lambda: partition in harness.coordinator.manager.owned_partitions())
    assert harness.heartbeat("g", ids["b"], 2) == ErrorCode.NONE


def test_a_stale_election_is_ignored(harness):
    partition = partition_for("g", PARTITIONS)
    manager = harness.coordinator.manager
    harness.coordinator.on_resigned(partition, 5)
    harness.coordinator.on_elected(partition, 4)  # older than the resignation
    assert manager.wait_for_tasks()
    assert partition not in manager.owned_partitions()
    harness.coordinator.on_elected(partition, 6)
    harness.coordinator.on_resigned(partition, 5)  # older than the election
    assert manager.wait_for_tasks()
    assert partition in manager.owned_partitions()
    harness.commit("g", {T0: 1})
    assert harness.fetch("g") == {T0: 1}


def test_shutdown_answers_waiting_requests(tmp_path):
    harness = Harness(tmp_path).start()
    ids = harness.stable_group("g", "a", "b")
    waiting = harness.join("g", ids["a"], client_id="a")
    harness.close()
    assert waiting.result.error == ErrorCode.NOT_COORDINATOR
    assert harness.join("g").result.error == ErrorCode.COORDINATOR_NOT_AVAILABLE
