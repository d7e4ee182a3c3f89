"""A local session's Python workers reach the JVM over Unix domain sockets
(``spark.python.unix.domain.socket.enabled`` in ``kspark.session.LOCAL_DEFAULTS``).

Over loopback TCP, the JVM listens on a fresh port for each Python worker it starts and takes the
first connection that arrives; a stranger that connects first (say, a client still retrying a
port that a stopped broker held) leaves the real worker waiting, and the query fails with
"Python worker failed to connect back". The stranger here connects to every port the driver JVM
starts listening on, as fast as /proc shows it, and sends the first bytes of a TLS ClientHello.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

# The first bytes of a TLS record: read by the JVM as a 4-byte length prefix, they promise far
# more bytes than ever come.
TLS_RECORD_START = b"\x16\x03\x01"


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on, from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


class Stranger:
    """Connects to each port ``pid`` starts listening on and holds the connection open."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.connected: list[int] = []
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stranger", daemon=True)

    def __enter__(self) -> Stranger:
        self._seen = listening_ports(self.pid)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(10)
        for sock in self._held:
            sock.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = listening_ports(self.pid)
            for port in sorted(now - self._seen):
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=1)
                    sock.sendall(TLS_RECORD_START)
                except OSError:
                    continue
                self._held.append(sock)
                self.connected.append(port)
            self._seen = now
            time.sleep(0.002)


def driver_pid(spark) -> int:
    return spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()


@pytest.mark.spark
def test_the_stranger_reaches_a_port_the_driver_starts_listening_on(spark):
    """The check below means something only if the stranger finds new ports in time."""
    jvm = spark.sparkContext._jvm
    with Stranger(driver_pid(spark)) as stranger:
        server = jvm.java.net.ServerSocket(0, 1, jvm.java.net.InetAddress.getLoopbackAddress())
        try:
            deadline = time.monotonic() + 10
            while server.getLocalPort() not in stranger.connected:
                assert time.monotonic() < deadline, "the stranger never connected"
                time.sleep(0.01)
        finally:
            server.close()


@pytest.mark.spark
def test_a_stranger_on_loopback_ports_cannot_take_a_python_workers_place(spark):
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceStreamReader,
        InputPartition,
    )

    # A Python streaming source: the driver starts a Python worker of its own to plan it
    # (createSimpleWorker), the path that listened on TCP.
    class TenRows(DataSourceStreamReader):
        def initialOffset(self):
            return {"offset": 0}

        def latestOffset(self):
            return {"offset": 10}

        def partitions(self, start, end):
            return [InputPartition(0)]

        def read(self, partition):
            for value in range(10):
                yield (value,)

    class TenRowsSource(DataSource):
        @classmethod
        def name(cls):
            return "ten_rows_for_the_stranger"

        def schema(self):
            return "value long"

        def streamReader(self, schema):
            return TenRows()

    spark.dataSource.register(TenRowsSource)
    rows: list = []
    with Stranger(driver_pid(spark)):
        query = (spark.readStream.format("ten_rows_for_the_stranger").load().writeStream
                 .foreachBatch(lambda batch, _: rows.extend(batch.collect()))
                 .trigger(availableNow=True).start())
        assert query.awaitTermination(180), "the query still runs after 180 s"
        assert query.exception() is None, query.exception()
    assert sorted(row.value for row in rows) == list(range(10))
