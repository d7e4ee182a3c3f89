from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

USER = '{"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}]}'


def test_users_round_trip(kpy_schema_registry, kpy_topic, kpy_produce, kpy_read):
    registry = SchemaRegistryClient({"url": kpy_schema_registry.url})
    topic = kpy_topic(partitions=1)
    context = SerializationContext(topic, MessageField.VALUE)
    serialize = AvroSerializer(registry, USER)  # registers the subject <topic>-value
    kpy_produce(topic, [serialize({"name": "ada"}, context)])
    (row,) = kpy_read(topic)
    assert AvroDeserializer(registry)(row["value"], context) == {"name": "ada"}
    assert registry.get_latest_version(f"{topic}-value").version == 1
