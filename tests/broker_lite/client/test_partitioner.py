"""Kafka's default partitioner, vectorized: murmur2 against the Java client's own test vectors,
the vectorized hash against the one-key reference on keys of every length, and partitions
against librdkafka's ``murmur2_random`` partitioner producing to real topics."""

import random
import uuid

import numpy as np
import pyarrow as pa
import pytest
from confluent_kafka import Producer as ConfluentProducer

from broker_lite.client import KafkaClient
from broker_lite.client.producer.partitioner import (
    NO_PARTITION,
    murmur2,
    murmur2_bytes,
    partitions_for_keys,
    sticky_partition,
)
from broker_lite.server.testing import bootstrap

#: org.apache.kafka.common.utils.UtilsTest#testMurmur2
KAFKA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize("key, expected", KAFKA_VECTORS.items())
def test_kafka_murmur2_vectors_one_key_at_a_time(key, expected):
    assert murmur2_bytes(key) == expected


def test_kafka_murmur2_vectors_vectorized():
    keys = pa.array(list(KAFKA_VECTORS))
    assert murmur2(keys).tolist() == list(KAFKA_VECTORS.values())
    assert murmur2(keys.cast(pa.string())).tolist() == list(KAFKA_VECTORS.values())


def random_keys(count: int, seed: int, lengths=(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 33,
                                                 100, 257, 1000, 4099)) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice(lengths)) for _ in range(count)]


def test_vectorized_murmur2_matches_the_reference_for_every_length():
    keys = random_keys(5000, seed=1)
    reference = [murmur2_bytes(k) for k in keys]
    array = pa.array(keys, pa.binary())
    assert murmur2(array).tolist() == reference
    # slices (the offsets buffer does not start at 0) and chunked columns
    assert murmur2(array.slice(123, 1000)).tolist() == reference[123:1123]
    chunked = pa.chunked_array([array.slice(0, 2000), array.slice(2000)])
    assert murmur2(chunked).tolist() == reference


def test_a_few_very_long_keys_among_short_ones():
    """Long keys are finished one at a time once few are left: same answers."""
    keys = [b"x" * 300_001, b"short", b"y" * 70_003, *random_keys(200, seed=2, lengths=(3, 8))]
    assert murmur2(pa.array(keys)).tolist() == [murmur2_bytes(k) for k in keys]


def test_null_keys_get_no_partition_and_empty_keys_hash():
    keys = pa.array([b"21", None, b"", None, b"abc"], pa.binary())
    partitions = partitions_for_keys(keys, 11)
    assert partitions[1] == partitions[3] == NO_PARTITION
    assert partitions[2] == (murmur2_bytes(b"") & 0x7FFFFFFF) % 11
    assert partitions[0] == (-973932308 & 0x7FFFFFFF) % 11
    assert partitions[4] == 479470107 % 11
    assert partitions_for_keys(pa.nulls(3), 4).tolist() == [NO_PARTITION] * 3
    assert partitions_for_keys(pa.array([], pa.binary()), 4).tolist() == []


def test_bad_inputs_are_refused():
    with pytest.raises(TypeError, match="binary or string"):
        murmur2(pa.array([1, 2]))
    with pytest.raises(ValueError, match="at least one partition"):
        partitions_for_keys(pa.array([b"a"]), 0)


def test_sticky_choice_prefers_partitions_with_a_leader():
    rng = random.Random(5)
    assert {sticky_partition([2, 4], 6, rng) for _ in range(100)} == {2, 4}
    assert {sticky_partition([], 3, rng) for _ in range(100)} == {0, 1, 2}


@pytest.mark.parametrize("partition_count", [1, 3, 7, 16])
def test_keys_land_where_librdkafka_murmur2_random_puts_them(broker, partition_count):
    """librdkafka's ``murmur2_random`` (the Java client's default for keyed records) sends 3000
    keys of assorted lengths to a real topic; its delivery reports say where each went."""
    topic = f"murmur-{partition_count}-{uuid.uuid4().hex[:6]}"
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        client.admin.create_topics([(topic, partition_count, 1)])
    keys = random_keys(3000, seed=partition_count, lengths=(0, 1, 2, 3, 4, 5, 8, 13, 31, 64, 200))
    producer = ConfluentProducer({"bootstrap.servers": bootstrap(broker), "log_level": 3,
                                  "partitioner": "murmur2_random", "linger.ms": 20})
    delivered: dict[int, int] = {}

    def on_delivery(error, message):
        assert error is None, error
        delivered[int(message.value())] = message.partition()

    for i, key in enumerate(keys):
        producer.produce(topic, key=key, value=b"%d" % i, on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(60) == 0
    theirs = np.array([delivered[i] for i in range(len(keys))])
    ours = partitions_for_keys(pa.array(keys, pa.binary()), partition_count)
    assert (ours == theirs).all()
    if partition_count > 1:
        assert len(set(theirs.tolist())) == partition_count  # the test spreads keys around
