"""``broker-lite start`` as a user runs it: a script starts it, waits for its listening line and
at once creates a topic with confluent-kafka's AdminClient and produces to it, on a loaded
machine too; it runs with the built-in defaults from any directory, finds its data again at the
next start, and does all that from an installed wheel."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.config import defaults
from broker_lite.config.properties import parse_properties
from broker_lite.tools.testing import CommandProcess

ROOT = Path(__file__).resolve().parents[2]
BROKER_LITE = Path(sys.executable).with_name("broker-lite")
CLIENT_TIMEOUT_S = 60  # per client step; a broker that is not ready makes a step hang


def create_and_produce(bootstrap: str, topic: str) -> None:
    """What a script does first: create a topic, produce to it; each step within its timeout."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    futures = admin.create_topics([NewTopic(topic, 2, 1)],
                                  request_timeout=CLIENT_TIMEOUT_S)
    futures[topic].result(timeout=CLIENT_TIMEOUT_S)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    errors = []
    for i in range(10):
        producer.produce(topic, value=b"v%d" % i, on_delivery=lambda err, _: errors.append(err))
    assert producer.flush(CLIENT_TIMEOUT_S) == 0
    assert errors == [None] * 10


def topic_names(bootstrap: str) -> set[str]:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    return set(admin.list_topics(timeout=CLIENT_TIMEOUT_S).topics)


def start_rounds(rounds: int, tmp_path: Path) -> None:
    """Each round a fresh broker with the built-in defaults and an embedded ZooKeeper."""
    failures = []
    for number in range(rounds):
        data = tmp_path / f"round-{number}"
        command = CommandProcess([str(BROKER_LITE), "start",
                                "--override", "listeners=PLAINTEXT://127.0.0.1:0",
                                "--override", f"log.dirs={data}"], tmp_path / "broker.log")
        try:
            bootstrap, _ = command.listening()
            create_and_produce(bootstrap, "first-topic")
        except (KafkaException, AssertionError) as exc:
            failures.append(f"round {number}: {exc!r}")
        finally:
            assert command.stop() == 0, command.log_tail()
        shutil.rmtree(data, ignore_errors=True)
    assert failures == [], failures


@pytest.fixture
def cpu_burners():
    """Two processes spinning on the CPU for the whole test (the machine has two cores)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for burner in burners:
        burner.kill()
        burner.wait(30)


@pytest.mark.broker
def test_a_client_served_the_moment_the_listening_line_appears(tmp_path):
    start_rounds(3, tmp_path)


@pytest.mark.broker
@pytest.mark.slow
def test_a_client_served_the_moment_the_listening_line_appears_on_a_busy_machine(
        tmp_path, cpu_burners, soak):
    start_rounds(50 if soak else 15, tmp_path)


def start_serve_restart(command: list[str], tmp_path: Path, env: dict[str, str]) -> None:
    """Start ``command`` with the defaults in an empty directory, serve a client, stop it, start
    it again: the topic is still there, in the state directory."""
    workdir = tmp_path / "empty"
    workdir.mkdir()
    listener = "listeners=PLAINTEXT://127.0.0.1:0"
    data_dir = Path(env["XDG_STATE_HOME"]) / "broker-lite"
    for start in ("first", "second"):
        broker = CommandProcess([*command, "start", "--override", listener],
                              tmp_path / "broker.log", cwd=workdir, env=env)
        try:
            bootstrap, data_line = broker.listening()
            assert data_line == f"broker-lite: data in {data_dir}"
            if start == "first":
                create_and_produce(bootstrap, "kept")
            else:
                assert "kept" in topic_names(bootstrap)
        finally:
            assert broker.stop() == 0, broker.log_tail()
    assert (data_dir / "kept-0").is_dir() and list(workdir.iterdir()) == []


@pytest.mark.broker
def test_a_broker_with_schema_registry_listeners_prints_the_registrys_line(tmp_path):
    broker = CommandProcess([str(BROKER_LITE), "start",
                             "--override", "listeners=PLAINTEXT://127.0.0.1:0",
                             "--override", f"log.dirs={tmp_path / 'data'}",
                             "--override", "schema.registry.listeners=http://127.0.0.1:0"],
                            tmp_path / "broker.log")
    try:
        broker.listening()
        url = broker.address()
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}/schemas/types", timeout=CLIENT_TIMEOUT_S) as answer:
            assert json.load(answer) == ["JSON", "PROTOBUF", "AVRO"]
    finally:
        assert broker.stop() == 0, broker.log_tail()


@pytest.mark.broker
def test_the_built_in_defaults_run_anywhere_and_keep_the_data_for_the_next_start(tmp_path):
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    start_serve_restart([sys.executable, "-m", "broker_lite"], tmp_path, env)


@pytest.mark.broker
def test_an_installed_wheel_runs_with_its_packaged_defaults(tmp_path):
    source = tmp_path / "source"  # a copy, so that the build leaves nothing in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
        ".hypothesis", "spark-warehouse", "metastore_db"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                    str(wheels), str(source)], check=True, timeout=240)
    (wheel,) = wheels.glob("kpy-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packaged = archive.read("broker_lite/config/defaults/server.properties").decode()
    assert parse_properties(packaged) == defaults.server_properties()

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                    str(site), str(wheel)], check=True, timeout=120)
    # -S: no site-packages processing, so this checkout's editable install is out of sight; the
    # test environment's packages come in through PYTHONPATH, after the installed wheel.
    dependencies = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sorted(dependencies)]),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    python = [sys.executable, "-S"]
    where = subprocess.run([*python, "-c",
                            "import broker_lite.config.defaults as d; print(d.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    packaged = site / "broker_lite" / "config" / "defaults" / "__init__.py"
    assert where.stdout.strip() == str(packaged), where
    start_serve_restart([*python, "-m", "broker_lite"], tmp_path, env)

