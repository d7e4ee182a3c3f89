"""Benchmark: how long a partition goes without acknowledging acks=all writes when its leader
is cut off from ZooKeeper and the other brokers (its clients still reaching it), beside the
same when its leader is killed with SIGKILL, in the same run.

    python -m broker_lite.local.bench_failover [--rounds 20]

The cluster is a :class:`broker_lite.local.cluster.LocalCluster` of three brokers with
``faults=True`` (brokers behind proxies the cluster controls), its settings those of every
local cluster (``zookeeper.session.timeout.ms=6000``, the embedded ZooKeeper's ``tickTime``
2000 ms) but ``auto.leader.rebalance.enable=false``, so that no preferred-leader election moves
the partition while a round is timed. One topic of one partition, three replicas,
``min.insync.replicas=2``. Each round
takes the partition's leader out one way, then the other (the order alternating each round):

- **isolated**: ``isolate(leader, from_=("zookeeper", "brokers"))``; healed once timed, and the
  old leader waited for back in the ISR;
- **killed**: SIGKILL; started again once timed, and waited for back in the ISR.

From the fault on, two moments are timed: the controller's election of another leader (its
state znode, polled every 10 ms) and the first acks=all write that other leader acknowledges
(a one-record Produce request sent to it every 20 ms, without a client's retries and metadata
refreshes in the way). The figures printed are the 50th and 99th percentiles over the rounds
(the 99th of 20 rounds is their slowest), in seconds.

The bound expected from the settings, both ways: ZooKeeper expires the old leader's session
between 6 s (the session timeout) and 8 s (plus one tick: sessions expire in tick-sized
buckets), since neither a silent network nor SIGKILL closes it; the controller's watch on
``/brokers/ids`` then fires, the election is one ZooKeeper transaction, the new leader and the
remaining follower read the new state, the follower truncates and fetches, and the high
watermark passes the record: well under a second on an idle machine. So 6 to 9 s from the
fault to the first acknowledgement, the same for both faults; the isolated leader's own
acks=all requests meanwhile wait unacknowledged (its ISR cannot shrink: the znode version it
holds is stale once its session expired).
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.local.cluster import LocalCluster
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch
from broker_lite.server.testing import call

FAULTS = ("isolated", "killed")
POLL_S = 0.01
PRODUCE_EVERY_S = 0.02
GIVE_UP_S = 120.0


def create_topic(cluster: LocalCluster) -> str:
    name = f"failover-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 3})
    admin.create_topics([NewTopic(name, 1, 3, config={"min.insync.replicas": "2"})]
                        )[name].result(60)
    cluster.wait_for_isr(name, 0)
    return name


def acknowledged(address: str, topic: str) -> bool:
    """One acks=all Produce of one record to partition 0 at ``address``: acknowledged?"""
    host, port = address.split(":")
    try:
        answer = call(int(port), ApiKey.PRODUCE, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 2000,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": 0, "records": build_batch([(None, b"probe")])}]}]}, host=host)
    except OSError:
        return False
    return answer["responses"][0]["partition_responses"][0]["error_code"] == ErrorCode.NONE


def one_failover(cluster: LocalCluster, topic: str, fault: str) -> tuple[float, float]:
    """Take the leader out by ``fault``, bring it back; seconds from the fault to the
    election of another leader, and to its first acknowledgement."""
    leader = cluster.wait_for_leader(topic, 0)
    if not acknowledged(cluster.broker(leader).address, topic):
        raise RuntimeError(f"broker {leader} does not acknowledge acks=all before the fault")
    started = time.monotonic()
    if fault == "isolated":
        cluster.isolate(leader, from_=("zookeeper", "brokers"))
    else:
        cluster.kill(leader)
    while (new := cluster.leader(topic, 0)) in (leader, -1):
        if time.monotonic() - started > GIVE_UP_S:
            raise RuntimeError(f"no leader other than {leader} after {GIVE_UP_S:.0f} s")
        time.sleep(POLL_S)
    elected = time.monotonic() - started
    address = cluster.broker(new).address
    while not acknowledged(address, topic):
        if time.monotonic() - started > GIVE_UP_S:
            raise RuntimeError(f"broker {new} acknowledged nothing in {GIVE_UP_S:.0f} s")
        time.sleep(PRODUCE_EVERY_S)
    first_ack = time.monotonic() - started
    if fault == "isolated":
        cluster.heal()
    else:
        cluster.start_broker(leader)
    cluster.wait_for_isr(topic, 0, {1, 2, 3}, timeout_s=GIVE_UP_S)
    return elected, first_ack


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"{args.rounds} rounds of each fault, a 3-broker local cluster behind proxies, "
          f"zookeeper.session.timeout.ms=6000, tickTime 2000 ms", flush=True)
    times: dict[str, dict[str, list[float]]] = {f: {"elected": [], "acked": []} for f in FAULTS}
    with LocalCluster(brokers=3, properties={"auto.leader.rebalance.enable": "false"},
                      faults=True) as cluster:
        topic = create_topic(cluster)
        for round_number in range(args.rounds):
            for fault in FAULTS if round_number % 2 == 0 else tuple(reversed(FAULTS)):
                elected, acked = one_failover(cluster, topic, fault)
                times[fault]["elected"].append(elected)
                times[fault]["acked"].append(acked)
                print(f"round {round_number + 1}: {fault:<8} new leader elected after "
                      f"{elected:5.2f} s, acknowledging acks=all after {acked:5.2f} s",
                      flush=True)
    for fault in FAULTS:
        to_ack, to_election = times[fault]["acked"], times[fault]["elected"]
        print(f"{fault:<8} to a new leader acknowledging acks=all: p50 "
              f"{percentile(to_ack, 0.5):5.2f} s, p99 {percentile(to_ack, 0.99):5.2f} s "
              f"(elected: p50 {percentile(to_election, 0.5):5.2f} s, p99 "
              f"{percentile(to_election, 0.99):5.2f} s; mean {statistics.mean(to_ack):5.2f} s)")
    ratio = statistics.median(times["isolated"]["acked"]) / \
        statistics.median(times["killed"]["acked"])
    print(f"ratio isolated / killed (p50): {ratio:.2f}x (expected about 1x: both wait for "
          f"the session to expire, 6 to 8 s, then under a second)")


if __name__ == "__main__":
    main()
