"""The driver's abort of a failed exactly-once write, against a real broker_lite without Spark: a
task that had not reported may start its transaction after the abort has fenced it (Spark stops
a failed job's tasks without waiting for them) and then be killed; the abort must still leave
no transaction open, or read_committed readers of that partition stall until it times out."""

import uuid

import pyarrow as pa
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from broker_lite.client import Producer
from broker_lite.server.testing import bootstrap
from kspark.sink import parse_sink_options
from kspark.sink import writer as sink_writer


@pytest.fixture
def servers(broker) -> str:
    return bootstrap(broker)


def create_topic(servers: str) -> str:
    topic = f"abort-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def rows(value: bytes) -> pa.RecordBatch:
    return pa.record_batch({"value": [value], "partition": pa.array([0], pa.int32())})


def test_a_straggler_starting_its_transaction_after_the_abort_is_aborted_too(
        servers, read_committed, monkeypatch):
    topic = create_topic(servers)
    options = parse_sink_options({"kafka.bootstrap.servers": servers, "topic": topic})
    write_id = uuid.uuid4().hex
    straggler_id = sink_writer.transactional_id(write_id, 0)
    monkeypatch.setattr(sink_writer, "STRAGGLERS_GONE_S", 0.2, raising=False)
    real_init = Producer.init_transactions
    fenced = []

    def init_transactions(producer):
        real_init(producer)
        if producer.transactional_id == straggler_id and not fenced:
            fenced.append(producer)  # the abort has just fenced task 0: now the task starts
            straggler = Producer(dict(options.client), transactional_id=straggler_id)
            real_init(straggler)
            straggler.begin_transaction()
            straggler.send_arrow(topic, rows(b"straggler"))
            straggler.close()  # killed with its transaction open

    monkeypatch.setattr(Producer, "init_transactions", init_transactions)
    sink_writer.abort(options, [None], write_id)  # task 0 never reported
    assert fenced, "the abort did not take task 0's transactional id over"

    with Producer(dict(options.client)) as later:  # a later write to the same partition
        later.send_arrow(topic, rows(b"after"))
    seen = read_committed(servers, topic, 1, timeout_s=20)
    assert [m.value() for m in seen] == [b"after"]
