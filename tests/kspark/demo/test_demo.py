"""``kpy demo`` end to end, as a user runs it: a process of its own with ZooKeeper, broker_lite
and Spark, its summary and exit status, what it leaves on disk, and that it leaves no process
behind, whether it completes, fails its verification or is interrupted."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest

from broker_lite.zk.testing import wait_until
from kspark.demo.aggregates import ExpectedAggregates
from kspark.demo.generator import PageViews

MARK = "KPY_DEMO_TEST_RUN"
RUN_TIMEOUT_S = 420  # a demo run; below the 600 s a test may take in all


def demo(*args: str) -> list[str]:
    return [sys.executable, "-m", "kspark.cli", "demo", *args]


@pytest.fixture
def run_id() -> str:
    """Marks the environment of a demo process, which its children inherit (ZooKeeper, Spark's
    JVM, Python workers), so the test can tell whether any of them is still there."""
    return uuid.uuid4().hex


def environment(run_id: str) -> dict[str, str]:
    return {**os.environ, MARK: run_id}


def processes_of(run_id: str) -> list[str]:
    """Command lines of the processes still running with ``run_id`` in their environment."""
    marker = f"{MARK}={run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ")[:200]
                             .decode(errors="replace"))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def assert_nothing_left(run_id: str) -> None:
    # Spark's JVM exits once it sees the demo's end of its stdin: give it a moment.
    wait_until(lambda: not processes_of(run_id), 30,
               lambda: f"processes left behind: {processes_of(run_id)}")


def expected_windows(records: int, seed: int) -> int:
    expected = ExpectedAggregates()
    for chunk in PageViews(records, seed).chunks():
        expected.add(chunk)
    return len(expected.result())


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.zookeeper
def test_the_demo_streams_counts_verifies_and_keeps_its_data(tmp_path, run_id):
    data = tmp_path / "data"
    result = subprocess.run(
        demo("--records", "20000", "--partitions", "3", "--seed", "7", "--rate", "5000",
             "--quiet", "--data-dir", str(data)),
        cwd=tmp_path, env=environment(run_id), capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr

    assert "records in == records produced: OK (20,003 read, 20,000 page views + 3 " \
           "heartbeats produced)" in out
    assert "each window written once: OK" in out
    assert f"aggregates match: OK ({expected_windows(20_000, 7):,} windows)" in out
    assert re.search(r"^  records in +20,003 ", out, re.M)
    assert re.search(r"^  late rows dropped +0$", out, re.M)
    assert re.search(r"^batch 0: [\d,]+ records in", out, re.M)  # --quiet: a line per batch
    assert not re.search(r"records in [\d.]+[kM]?/", result.stderr)  # no live progress line

    # --data-dir keeps the topics' logs, ZooKeeper's data and the query's checkpoint
    for partition in range(3):
        assert (data / "logs" / f"page-views-{partition}").is_dir()
        assert (data / "logs" / f"page-view-counts-{partition}").is_dir()
    assert any((data / "checkpoint" / "commits").iterdir())
    assert_nothing_left(run_id)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.zookeeper
def test_a_failed_verification_says_what_differs_and_exits_1(tmp_path, run_id):
    # The demo as it is, but its expected counts miss the first page view.
    script = textwrap.dedent("""
        import sys

        import kspark.demo.run
        from kspark.demo.aggregates import ExpectedAggregates

        class OneViewShort(ExpectedAggregates):
            def add(self, views):
                super().add(views.slice(1) if self.views == 0 else views)

        kspark.demo.run.ExpectedAggregates = OneViewShort
        from kspark.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    result = subprocess.run(
        [sys.executable, "-c", script, "demo", "--records", "3000", "--rate", "0", "--quiet"],
        cwd=tmp_path, env=environment(run_id), capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "records in == records produced: OK" in result.stdout
    assert re.search(r"aggregates match: FAILED \(1 of [\d,]+ windows differ: 1 with other "
                     r"counts, e\.g\. 2025-03-14T09:00:00Z /\S* \(\d+ views, [\d,]+ ms, "
                     r"expected \d+ views", result.stdout), result.stdout
    assert_nothing_left(run_id)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.zookeeper
def test_ctrl_c_shuts_everything_down(tmp_path, run_id):
    process = subprocess.Popen(
        demo("--records", "5000000", "--quiet"), cwd=tmp_path, env=environment(run_id),
        stdout=subprocess.PIPE, stderr=(tmp_path / "stderr").open("w"), text=True,
        start_new_session=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    try:
        wait_until(lambda: any(line.startswith("batch ") for line in lines) or
                   process.poll() is not None, RUN_TIMEOUT_S, "the query ran no micro-batch")
        assert process.poll() is None, "".join(lines)
        # A terminal's Ctrl-C goes to the whole foreground process group.
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(120) == 130, "".join(lines)
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(10)
    out = "".join(lines)
    assert "Interrupted: shutting down." in out
    assert "Verification" not in out
    data = re.search(r"^  data +(\S+) \(removed at the end\)$", out, re.M)
    assert data and not Path(data.group(1)).exists()
    assert_nothing_left(run_id)


def test_a_data_dir_with_something_in_it_is_refused(tmp_path, run_id):
    (tmp_path / "notes.txt").write_text("mine")
    result = subprocess.run(demo("--data-dir", str(tmp_path)), env=environment(run_id),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"--data-dir {tmp_path} is not empty" in result.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert_nothing_left(run_id)


@pytest.mark.parametrize("args, message", [
    (["--records", "0"], "expected a number >= 1, got 0"),
    (["--partitions", "two"], "expected a whole number, got 'two'"),
    (["--rate", "-5"], "expected a rate >= 0"),
])
def test_bad_options_are_usage_errors(args, message):
    result = subprocess.run(demo(*args), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert message in result.stderr


def test_help_lists_the_options():
    result = subprocess.run(demo("--help"), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    for option in ("--records", "--partitions", "--rate", "--seed", "--data-dir", "--quiet"):
        assert option in result.stdout


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.zookeeper
def test_the_demo_in_avro_reads_and_writes_through_the_registry_and_verifies(tmp_path, run_id):
    result = subprocess.run(
        demo("--format", "avro", "--records", "20000", "--partitions", "3", "--seed", "7",
             "--rate", "0", "--quiet"),
        cwd=tmp_path, env=environment(run_id), capture_output=True, text=True,
        timeout=RUN_TIMEOUT_S)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert re.search(r"^  registry  http://127\.0\.0\.1:\d+: page views and counts in Avro",
                     out, re.M)
    assert "-> value.format=avro -> views per page" in out
    assert "records in == records produced: OK (20,003 read, 20,000 page views + 3 " \
           "heartbeats produced)" in out
    assert "each window written once: OK" in out
    assert f"aggregates match: OK ({expected_windows(20_000, 7):,} windows)" in out
    assert_nothing_left(run_id)
