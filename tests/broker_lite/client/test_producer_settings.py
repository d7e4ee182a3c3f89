"""The producer's settings rules (idempotence, acks, retries, as the Java client has them),
settings taken from the client's config, the connections it shares or owns, transactional calls
in the wrong state, and bad rows refused before anything is sent."""

import pyarrow as pa
import pytest
from producer_checks import producer_for, rows, scripted_producer_broker

from broker_lite.client import (
    ClientClosedError,
    ConfigError,
    InvalidArgumentError,
    KafkaClient,
    Producer,
    TransactionStateError,
)
from broker_lite.protocol import ApiKey

TOPIC = "events"


@pytest.fixture
def scripted():
    with scripted_producer_broker(TOPIC) as broker:
        yield broker


# -- settings --------------------------------------------------------------------------------------

def test_idempotence_follows_the_java_rules():
    with KafkaClient({"bootstrap.servers": "127.0.0.1:9"}) as client:
        assert Producer(client).idempotent
        assert not Producer(client, acks="1").idempotent  # not asked for: turned off
        assert not Producer(client, retries=0).idempotent
        assert not Producer(client, idempotent=False).idempotent
        with pytest.raises(ConfigError, match=r"^enable\.idempotence: needs acks=all"):
            Producer(client, acks=1, idempotent=True)
        with pytest.raises(ConfigError, match=r"^enable\.idempotence: needs retries > 0"):
            Producer(client, retries=0, idempotent=True)
        with pytest.raises(ConfigError, match="always idempotent"):
            Producer(client, transactional_id="t", idempotent=False)
        with pytest.raises(ConfigError, match=r"^acks: acks=0 .*is not supported"):
            Producer(client, acks="0")
        with pytest.raises(ConfigError, match=r"^compression\.type: .*'brotli'"):
            Producer(client, compression="brotli")
        with pytest.raises(ConfigError, match=r"^batch\.size"):
            Producer(client, batch_size=0)
    with KafkaClient({"bootstrap.servers": "127.0.0.1:9", "enable.idempotence": "true",
                      "acks": "1"}) as client:
        with pytest.raises(ConfigError, match=r"^enable\.idempotence: needs acks=all"):
            Producer(client)


def test_settings_come_from_the_client_config():
    with Producer({"bootstrap.servers": "127.0.0.1:9", "compression.type": "zstd",
                   "request.required.acks": "all", "batch.size": "5000",
                   "max.request.size": "70000", "transactional.id": "tx",
                   "transaction.timeout.ms": "9000"}) as producer:
        assert producer.compression.kafka_name == "zstd"
        assert (producer.acks, producer.batch_size, producer.max_request_size) == \
            (-1, 5000, 70000)
        assert (producer.transactional_id, producer.transaction_timeout_ms) == ("tx", 9000)
        assert producer.idempotent and producer.transaction_state.name == "UNINITIALIZED"
    with pytest.raises(ConfigError, match=r"^kafka\.acks: .*not supported"):
        KafkaClient.from_options({"kafka.bootstrap.servers": "b:1", "kafka.acks": "0"})


def test_transactional_calls_in_the_wrong_state_name_the_state():
    with Producer({"bootstrap.servers": "127.0.0.1:9"}, transactional_id="tx") as producer:
        with pytest.raises(TransactionStateError, match="call init_transactions"):
            producer.begin_transaction()
        with pytest.raises(TransactionStateError, match="call init_transactions"):
            producer.send_batch(TOPIC, 0, rows(1))
    with Producer({"bootstrap.servers": "127.0.0.1:9"}) as producer:
        with pytest.raises(TransactionStateError, match="needs a transactional producer"):
            producer.commit_transaction()


def test_bad_rows_are_invalid_arguments_before_anything_is_sent(scripted):
    with producer_for(scripted) as producer:
        with pytest.raises(ValueError, match="'value' column"):
            producer.send_batch(TOPIC, 0, pa.record_batch({"key": [b"k"]}))
        with pytest.raises(ValueError, match="must be binary or string"):
            producer.send_batch(TOPIC, 0, pa.record_batch({"value": [1]}))
        with pytest.raises(ValueError, match="partition must be an integer >= 0"):
            producer.send_batch(TOPIC, -1, rows(1))
        with pytest.raises(ValueError, match="negative partition -3"):
            producer.send_arrow(TOPIC, pa.record_batch({
                "value": [b"v"], "partition": pa.array([-3], pa.int32())}))
    assert scripted.requests_for(ApiKey.PRODUCE) == []


def test_a_producer_shares_a_clients_connections_or_owns_its_own(scripted):
    with KafkaClient({"bootstrap.servers": scripted.bootstrap}) as client:
        with client.producer() as shared:
            assert shared.send_batch(TOPIC, 0, rows(1)) == (0, 1)
        assert client.partitions(TOPIC) == [0, 1, 2]  # closing the producer left it open
        shared = Producer(client)
        assert shared.send_batch(TOPIC, 0, rows(1)) == (1, 1)
    with pytest.raises(ClientClosedError):  # the client closed its connections
        shared.send_batch(TOPIC, 0, rows(1))
    own = producer_for(scripted)
    assert own.send_batch(TOPIC, 1, rows(2)) == (0, 2)
    own.close()
    with pytest.raises(ClientClosedError):
        own.send_batch(TOPIC, 1, rows(1))
    with pytest.raises(InvalidArgumentError, match="expected a KafkaClient, a ClientConfig or "
                                                   "a mapping of settings, got str"):
        Producer("127.0.0.1:9092")
