"""The embedded ZooKeeper process: start, answer, restart on the same data, clean exits, errors."""

import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.properties import read_properties
from broker_lite.server.zk_broker import ZkBroker
from broker_lite.zk import (
    EmbeddedZooKeeper,
    JavaNotFoundError,
    ZooKeeperConfigError,
    ZooKeeperJarsNotFoundError,
    ZooKeeperStartError,
    connect,
)
from broker_lite.zk.java import (
    CLASSPATH_ARTIFACTS,
    pyspark_jars_dir,
    zookeeper_classpath,
)
from broker_lite.zk.server import STOP_TIMEOUT_S, is_serving, server_status
from broker_lite.zk.standalone import main as standalone_main
from broker_lite.zk.standalone import server_from_properties
from broker_lite.zk.testing import RecordingListener, wait_until

REPO = Path(__file__).resolve().parents[3]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_start_to_first_answer_is_measured(zookeeper_server, record_property):
    assert zookeeper_server.running and is_serving("127.0.0.1", zookeeper_server.port)
    assert "Mode: standalone" in server_status("127.0.0.1", zookeeper_server.port)
    seconds = zookeeper_server.startup_seconds
    assert seconds is not None and seconds > 0
    record_property("zookeeper_startup_seconds", seconds)
    print(f"embedded ZooKeeper answered {seconds:.3f} s after the java process started")


def test_generated_config_binds_loopback_without_admin_server(zookeeper_server):
    config = read_properties(zookeeper_server.config_path)
    assert config["clientPortAddress"] == "127.0.0.1"
    assert config["clientPort"] == str(zookeeper_server.port)
    assert config["dataDir"] == zookeeper_server.data_dir.as_posix()
    assert config["admin.enableServer"] == "false"
    assert config["4lw.commands.whitelist"] == "ruok,srvr,stat"
    log = zookeeper_server.log_path.read_text()
    assert "binding to port" in log.lower() or "clientPortAddress" in log
    for path in (zookeeper_server.log_path, zookeeper_server.out_path):
        assert "NoClassDefFoundError" not in path.read_text()


def test_classpath_is_the_explicit_list():
    names = [jar.name for jar in zookeeper_classpath()]
    assert len(names) == len(CLASSPATH_ARTIFACTS)
    for name, (artifact, _why) in zip(names, CLASSPATH_ARTIFACTS, strict=True):
        assert name.startswith(artifact + "-") and name[len(artifact) + 1].isdigit()
    assert all(jar.parent == pyspark_jars_dir() for jar in zookeeper_classpath())


@pytest.mark.broker
@pytest.mark.zookeeper
def test_restart_on_the_same_data_dir_keeps_port_and_cluster_id(tmp_path):
    server = EmbeddedZooKeeper(tmp_path / "zk")
    config = BrokerConfig({"broker.id": "1"})
    ids = []
    try:
        for _ in range(2):
            server.start()
            client = connect(server.connect_string + "/cluster-a")
            broker = ZkBroker(client, config, RecordingListener(tmp_path / "data")).start()
            ids.append((server.port, broker.cluster_id))
            broker.stop()
            client.stop()
            client.close()
            server.stop()
            assert not server.running and not is_serving("127.0.0.1", server.port)
    finally:
        server.stop()
    assert ids[0] == ids[1]
    assert (tmp_path / "zk" / "version-2").is_dir()


@pytest.mark.zookeeper
def test_a_taken_port_fails_with_the_log_tail(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = EmbeddedZooKeeper(tmp_path, taken.getsockname()[1], start_timeout_s=20)
        with pytest.raises(ZooKeeperStartError, match="Address already in use") as caught:
            server.start()
    assert "exited with status" in str(caught.value) and str(server.log_path) in str(caught.value)
    assert not server.running


@pytest.mark.zookeeper
def test_missing_java_says_what_to_install(tmp_path, monkeypatch):
    with pytest.raises(JavaNotFoundError, match=r"Java 17.*JAVA_HOME"):
        EmbeddedZooKeeper(tmp_path, java=tmp_path / "no-java").start()
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(JavaNotFoundError, match=f"JAVA_HOME={tmp_path} has no bin/java"):
        EmbeddedZooKeeper(tmp_path).start()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(JavaNotFoundError, match="no java on PATH"):
        EmbeddedZooKeeper(tmp_path).start()


@pytest.mark.zookeeper
def test_missing_jars_name_the_directory(tmp_path):
    with pytest.raises(ZooKeeperJarsNotFoundError, match=f"no jars directory at {tmp_path / 'x'}"):
        zookeeper_classpath(tmp_path / "x")
    # zookeeper-jute must not pass for the server jar
    (tmp_path / "zookeeper-jute-3.9.5.jar").touch()
    with pytest.raises(ZooKeeperJarsNotFoundError) as caught:
        EmbeddedZooKeeper(tmp_path / "zk", jars_dir=tmp_path).start()
    message = str(caught.value)
    assert f"missing from {tmp_path}:" in message
    assert "zookeeper-<version>.jar" in message and "zookeeper-jute-<version>.jar" not in message


def first_line(process: subprocess.Popen, timeout_s: float = 60) -> str:
    """The first line ``process`` prints (its stdout a text pipe); fails, killing it, when none
    comes within ``timeout_s``."""
    if not select.select([process.stdout], [], [], timeout_s)[0]:
        process.kill()
        pytest.fail(f"no line in {timeout_s} s from {str(process.args)[:200]}: "
                    f"{process.communicate(timeout=30)[0]!r}")
    return process.stdout.readline()


def _run_child(script: str, tmp_path: Path) -> tuple[subprocess.Popen, int, int]:
    """Run ``script`` (which starts a server as ``server``) in a Python child; returns the
    child, the Java pid and the port it printed."""
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, signal, sys
            from broker_lite.zk import EmbeddedZooKeeper
            server = EmbeddedZooKeeper({str(tmp_path)!r}).start()
            print(server.pid, server.port, flush=True)
        """) + textwrap.dedent(script)],
        stdout=subprocess.PIPE, text=True)
    java_pid, port = map(int, first_line(child).split())
    return child, java_pid, port


@pytest.mark.parametrize("ending", [
    "os.kill(os.getpid(), signal.SIGKILL)",  # no atexit: the kernel's parent-death signal
    "sys.exit(0)",  # atexit
])
def test_no_java_process_outlives_python(tmp_path, ending):
    child, java_pid, port = _run_child(ending, tmp_path)
    child.wait(30)
    wait_until(lambda: not _alive(java_pid), timeout=15, message=f"java {java_pid} ends")
    assert not is_serving("127.0.0.1", port)


def test_standalone_reads_kafka_zookeeper_properties(tmp_path):
    server = server_from_properties(read_properties(REPO / "conf" / "zookeeper.properties"))
    assert (server.data_dir, server.port, server.host) \
        == (Path("/tmp/zookeeper"), 2181, "127.0.0.1")
    assert server.max_client_cnxns == 0 and server.tick_ms == 2000
    server = server_from_properties({"dataDir": str(tmp_path), "autopurge.purgeInterval": "1"})
    assert server.port == 2181 and server.settings == {"autopurge.purgeInterval": "1"}
    with pytest.raises(ZooKeeperConfigError, match="Jetty"):
        server_from_properties({"admin.enableServer": "true"})
    with pytest.raises(ZooKeeperConfigError, match="clientPort='x' is not an integer"):
        server_from_properties({"clientPort": "x"})


def test_standalone_command_errors(tmp_path, capsys):
    assert standalone_main([str(tmp_path / "missing.properties")]) == 2
    assert "missing.properties" in capsys.readouterr().err


@pytest.mark.zookeeper
def test_standalone_command_stops_on_sigint(tmp_path):
    properties = tmp_path / "zookeeper.properties"
    properties.write_text(f"dataDir={tmp_path.as_posix()}/data\nclientPort=0\n")
    process = subprocess.Popen([sys.executable, "-m", "broker_lite.zk", str(properties)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = first_line(process)
    if "ZooKeeper serving on 127.0.0.1:" not in first:
        process.kill()
        pytest.fail(first + process.communicate(timeout=30)[0])
    process.send_signal(signal.SIGINT)
    # The JVM gets STOP_TIMEOUT_S to stop before it is killed; a loaded machine adds to that.
    rest = process.communicate(timeout=STOP_TIMEOUT_S + 50)[0]
    assert process.returncode == 0 and "ZooKeeper stopped" in rest


@pytest.mark.zookeeper
@pytest.mark.slow
def test_bench_startup_command_smoke():
    began = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "broker_lite.zk.bench_startup", "-n", "1"],
                            check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "run 1:" in result.stdout and "median:" in result.stdout and "peer:" in result.stdout
    print(result.stdout, f"(command took {time.monotonic() - began:.1f} s)")


@pytest.mark.zookeeper
def test_two_servers_never_share_a_data_dir(zookeeper_server):
    data_dir = zookeeper_server.data_dir
    with pytest.raises(ZooKeeperStartError, match=f"another ZooKeeper server runs on {data_dir}"):
        EmbeddedZooKeeper(zookeeper_server.data_dir).start()
    assert zookeeper_server.running and is_serving("127.0.0.1", zookeeper_server.port)
