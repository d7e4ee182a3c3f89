"""Sequential change notifications followed as Kafka's ZkNodeChangeNotificationListener follows
them: those present at start are taken as processed, new ones handled once each in order, a
failing one does not stop the next, and expired ones are purged."""

import logging

from broker_lite.zk.notifications import ChangeNotificationListener, sequence_of
from broker_lite.zk.testing import wait_until

PATH, PREFIX = "/kafka-acl-changes", "acl_changes_"


def announce(client, data: bytes) -> str:
    return client.create(f"{PATH}/{PREFIX}", data, sequence=True, makepath=True)


def test_new_notifications_are_handled_in_order_once(zookeeper_client):
    announce(zookeeper_client, b"old")
    seen = []
    listener = ChangeNotificationListener(zookeeper_client, PATH, PREFIX,
                                          lambda path, data: seen.append(data))
    listener.start()
    for data in (b"one", b"two", b"three"):
        announce(zookeeper_client, data)
    wait_until(lambda: len(seen) == 3, message="three notifications handled")
    announce(zookeeper_client, b"four")
    wait_until(lambda: len(seen) == 4)
    assert seen == [b"one", b"two", b"three", b"four"]
    listener.stop()


def test_a_failing_notification_does_not_stop_the_next(zookeeper_client, caplog):
    seen = []

    def handle(path, data):
        if data == b"bad":
            raise ValueError("unreadable")
        seen.append(data)

    listener = ChangeNotificationListener(zookeeper_client, PATH, PREFIX, handle)
    listener.start()
    with caplog.at_level(logging.CRITICAL, logger="broker_lite.zk.notifications"):
        announce(zookeeper_client, b"bad")
        announce(zookeeper_client, b"good")
        wait_until(lambda: seen == [b"good"])
    listener.stop()


def test_expired_notifications_are_purged(zookeeper_client):
    now = [0.0]
    announce(zookeeper_client, b"ancient")
    listener = ChangeNotificationListener(zookeeper_client, PATH, PREFIX, lambda p, d: None,
                                          expiration_ms=60_000, clock_ms=lambda: now[0])
    _, stat = zookeeper_client.get(f"{PATH}/{zookeeper_client.get_children(PATH)[0]}")
    now[0] = stat.ctime + 60_001  # the first is expired by the time the next arrives

    def zookeeper_clock_moved_on() -> bool:  # so the next notification is younger
        probe = zookeeper_client.create("/clock-", sequence=True)
        return zookeeper_client.get(probe)[1].ctime > stat.ctime

    wait_until(zookeeper_clock_moved_on)
    listener.start()
    fresh = announce(zookeeper_client, b"fresh")
    wait_until(lambda: zookeeper_client.get_children(PATH) == [fresh.rsplit("/", 1)[1]],
               message="the expired notification purged, the fresh one kept")
    listener.stop()


def test_sequence_numbers():
    assert sequence_of("acl_changes_0000000042", PREFIX) == 42
    assert sequence_of("acl_changes_x", PREFIX) is None
    assert sequence_of("config_change_0000000001", PREFIX) is None
