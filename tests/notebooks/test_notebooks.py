"""The notebooks of notebooks/, run top to bottom in a real kernel on the embedded stack: every
cell succeeds, the outputs show what the notebook claims, and nothing is left behind (no
ZooKeeper or other process, no file in the working or temporary directory)."""

import re

import pytest
from notebook_runner import NOTEBOOKS, execute, wait_for_exit

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.broker, pytest.mark.zookeeper]

ZOOKEEPER_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"
NOTEBOOK_FIXTURES = {
    "01-quickstart.ipynb": "quickstart",
    "02-streaming-pipeline.ipynb": "streaming",
    "03-inside-the-log.ipynb": "inside_the_log",
    "04-consumer-groups-and-zookeeper.ipynb": "groups_and_zookeeper",
    "05-schema-registry-and-avro.ipynb": "schema_registry",
}


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    return execute("01-quickstart.ipynb", tmp_path_factory.mktemp("quickstart"))


@pytest.fixture(scope="module")
def streaming(tmp_path_factory):
    return execute("02-streaming-pipeline.ipynb", tmp_path_factory.mktemp("streaming"))


@pytest.fixture(scope="module")
def inside_the_log(tmp_path_factory):
    return execute("03-inside-the-log.ipynb", tmp_path_factory.mktemp("inside-the-log"))


@pytest.fixture(scope="module")
def groups_and_zookeeper(tmp_path_factory):
    return execute("04-consumer-groups-and-zookeeper.ipynb",
                   tmp_path_factory.mktemp("groups-and-zookeeper"))


@pytest.fixture(scope="module")
def schema_registry(tmp_path_factory):
    return execute("05-schema-registry-and-avro.ipynb", tmp_path_factory.mktemp("registry"))


def number(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    assert match, f"no output matches {pattern!r}:\n{text}"
    return int(match.group(1))


def test_every_notebook_is_run_by_this_module():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NOTEBOOK_FIXTURES)


# -- what each notebook shows ----------------------------------------------------------------


def test_quickstart_reads_back_every_record_it_produced(quickstart):
    produced = number(r"produced (\d+) page views", quickstart.text)
    assert produced == 5000
    assert number(r"Spark read (\d+) rows", quickstart.text) == produced
    assert "/checkout" in quickstart.text  # the parsed JSON, grouped by page
    assert quickstart.images() >= 1


def test_streaming_pipeline_writes_every_view_exactly_once_across_a_restart(streaming):
    text = streaming.text
    assert number(r"caught up after [\d.]+ s: (\d+) records written, lag 0", text) == 3600
    assert number(r"now (\d+) written, lag 900", text) == 4500
    # The restarted query began at the offsets committed when the first one stopped.
    stopped = re.search(r"committed when stopped: (\{.*\})", text)
    resumed = re.search(r"restarted query began : (\{.*\})", text)
    assert stopped and resumed and stopped.group(1) == resumed.group(1)
    assert number(r"restarted query read (\d+) records", text) == 900
    records = number(r"output records: (\d+)", text)
    assert number(r"distinct ids: (\d+)", text) == records
    assert number(r"expected: (\d+)", text) == records
    assert number(r"duplicates: (\d+)", text) == 0
    assert number(r"missing: (\d+)", text) == 0
    assert records == 4500 - number(r"of which bots: (\d+)", text)
    assert streaming.images() >= 1


def test_inside_the_log_reads_indexes_batches_and_codecs(inside_the_log):
    text = inside_the_log.text
    assert number(r"produced (\d+) views to each of 5 topics", text) == 20000
    assert re.search(r"offset 1000: index entry for offset (\d+) .* holding offsets "
                     r"(\d+)-(\d+)", text)
    from_files = number(r"offset (\d+) from the files", text)
    assert number(r"offset (\d+) from the broker", text) == from_files
    assert "CRC-32C valid: True" in text
    ratios = {codec: float(ratio) for codec, ratio in
              re.findall(r"codec (\w+): [\d,]+ bytes on disk in \d+ segments, ratio ([\d.]+)",
                         text)}
    assert sorted(ratios) == ["gzip", "lz4", "none", "snappy", "zstd"]
    assert ratios["none"] < 1 < min(ratios[c] for c in ("gzip", "snappy", "lz4", "zstd"))
    assert inside_the_log.images() >= 1


def test_groups_and_zookeeper_split_partitions_and_show_the_tree(groups_and_zookeeper):
    text = groups_and_zookeeper.text
    owned = {name: set(map(int, partitions.split(","))) for name, partitions in
             re.findall(r"(alice|bob) \[([\d, ]+)\]", text.split("assignment:", 1)[1]
                        .splitlines()[0])}
    assert sorted(owned) == ["alice", "bob"]
    assert owned["alice"].isdisjoint(owned["bob"])
    assert owned["alice"] | owned["bob"] == set(range(6))
    assert number(r"total lag: (\d+)", text) == 900
    assert number(r"lag after catching up: (\d+)", text) == 0
    assert "cleanup.policy=compact" in text
    assert "offset commit" in text and "group metadata" in text  # __consumer_offsets decoded
    for znode in ("├── brokers", "└── 0 *", "controller *", "├── cluster"):
        assert znode in text, znode
    assert "/brokers/topics/page-views/partitions/5/state: leader 0" in text
    assert groups_and_zookeeper.images() >= 1


def test_schema_registry_notebook_reads_three_versions_with_the_latest(schema_registry):
    text = schema_registry.text
    assert number(r"wrote (\d+) readings in three versions", text) == 90
    assert "sensor-readings-value" in text
    assert number(r"read (\d+) readings", text) == 90
    ids = [int(n) for n in re.findall(r"schema id \d+: (\d+) records", text)]
    assert ids == [30, 30, 30]
    assert number(r"read with version 1: (\d+) readings", text) == 60
    assert number(r"(\d+) null \(written with version 3\)", text) == 30
    assert schema_registry.images() >= 1


# -- every notebook cleans up after itself ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(NOTEBOOK_FIXTURES))
def test_notebook_leaves_nothing_behind(name, request):
    executed = request.getfixturevalue(NOTEBOOK_FIXTURES[name])
    assert executed.error_outputs() == []
    zookeepers = [c for c in executed.probe["children"] if ZOOKEEPER_MAIN in c["cmdline"]]
    assert zookeepers == [], "the notebook left its ZooKeeper server running"
    # What still runs at the end (Spark's JVM, which lives as long as the Python process that
    # started it) ends with the kernel.
    left = wait_for_exit([executed.probe["kernel"], *executed.probe["children"]], 60)
    assert left == [], f"still running after the kernel was shut down: {left}"
    assert sorted(p.name for p in executed.workdir.iterdir()) == []
    assert sorted(p.name for p in executed.tmpdir.iterdir()) == []
