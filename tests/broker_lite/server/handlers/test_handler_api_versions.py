"""ApiVersions advertises exactly what the handlers serve, and that is what a Kafka 3.9 broker in
ZooKeeper mode serves: every API from Kafka 3.9's oldest version, up to its newest but for the
few newer versions listed (with why); and the consumer group protocol at Kafka 4.2's versions,
with the feature level group.version 1."""

from broker_lite.protocol import API_SCHEMAS, ApiKey
from broker_lite.server.apis import handlers

K = ApiKey

# validVersions of clients/src/main/resources/common/message/<Name>Request.json in Apache Kafka
# 3.9.0, for every API broker_lite implements.
KAFKA_3_9 = {
    K.PRODUCE: (0, 11), K.FETCH: (0, 17), K.LIST_OFFSETS: (0, 9), K.METADATA: (0, 12),
    K.OFFSET_COMMIT: (0, 9), K.OFFSET_FETCH: (0, 9), K.FIND_COORDINATOR: (0, 6),
    K.JOIN_GROUP: (0, 9), K.HEARTBEAT: (0, 4), K.LEAVE_GROUP: (0, 5), K.SYNC_GROUP: (0, 5),
    K.DESCRIBE_GROUPS: (0, 5), K.LIST_GROUPS: (0, 5), K.API_VERSIONS: (0, 4),
    K.CREATE_TOPICS: (0, 7), K.DELETE_TOPICS: (0, 6), K.INIT_PRODUCER_ID: (0, 5),
    K.OFFSET_FOR_LEADER_EPOCH: (0, 4), K.ADD_PARTITIONS_TO_TXN: (0, 5),
    K.ADD_OFFSETS_TO_TXN: (0, 4), K.END_TXN: (0, 4), K.WRITE_TXN_MARKERS: (0, 1),
    K.TXN_OFFSET_COMMIT: (0, 4), K.DESCRIBE_CONFIGS: (0, 4), K.ALTER_CONFIGS: (0, 2),
    K.CREATE_PARTITIONS: (0, 3), K.DELETE_GROUPS: (0, 2), K.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    K.OFFSET_DELETE: (0, 0), K.DESCRIBE_CLUSTER: (0, 1), K.DESCRIBE_PRODUCERS: (0, 0),
    K.DESCRIBE_TRANSACTIONS: (0, 0), K.LIST_TRANSACTIONS: (0, 1), K.DELETE_RECORDS: (0, 2),
    K.DESCRIBE_ACLS: (0, 3), K.CREATE_ACLS: (0, 3), K.DELETE_ACLS: (0, 3),
    K.CONTROLLED_SHUTDOWN: (0, 3), K.ELECT_LEADERS: (0, 2),
    K.ALTER_PARTITION_REASSIGNMENTS: (0, 0), K.LIST_PARTITION_REASSIGNMENTS: (0, 0),
    K.SASL_HANDSHAKE: (0, 1), K.SASL_AUTHENTICATE: (0, 2),
    K.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0), K.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
}

# The consumer group protocol (KIP-848), at the versions Kafka 4.2 serves.
KAFKA_4_2 = {K.CONSUMER_GROUP_HEARTBEAT: (0, 1), K.CONSUMER_GROUP_DESCRIBE: (0, 1)}

# Newer versions Kafka 3.9 has and broker_lite does not serve: the newest served, and why.
NEWEST_SERVED = {
    K.API_VERSIONS: 3,      # v4 only lets SupportedFeatures.MinVersion be 0 (KAFKA-17011)
    K.FIND_COORDINATOR: 4,  # v5: TRANSACTION_ABORTABLE (KIP-890), v6: share groups (KIP-932)
    K.LIST_OFFSETS: 8,      # v9: the last tiered offset (KIP-1005); no tiered storage here
}


def test_api_versions_advertises_the_handlers_ranges(harness):
    response = harness.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                     "client_software_version": "1"})
    advertised = {a["api_key"]: (a["min_version"], a["max_version"])
                  for a in response["api_keys"]}
    assert advertised == {int(key): (h.min_version, h.max_version)
                          for key, h in handlers().items()}


def test_every_api_is_served_from_kafka_3_9s_oldest_version():
    served = handlers()
    assert set(served) <= set(KAFKA_3_9) | set(KAFKA_4_2)
    for key, handler in served.items():
        oldest, newest = {**KAFKA_3_9, **KAFKA_4_2}[key]
        assert handler.min_version == oldest, key.name
        assert handler.max_version == NEWEST_SERVED.get(key, newest), key.name


def test_every_version_served_has_a_schema():
    for key, handler in handlers().items():
        schema = API_SCHEMAS[key]
        for version in range(handler.min_version, handler.max_version + 1):
            assert version in schema.request.valid_versions, (key.name, version)
            assert version in schema.response.valid_versions, (key.name, version)


def test_the_group_version_feature_is_finalized(harness):
    response = harness.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                     "client_software_version": "1"})
    assert response["supported_features"] == [
        {"name": "group.version", "min_version": 0, "max_version": 1}]
    assert response["finalized_features"] == [
        {"name": "group.version", "min_version_level": 1, "max_version_level": 1}]
    assert response["finalized_features_epoch"] == 0
    older = harness.call(ApiKey.API_VERSIONS, 2, {})
    assert "finalized_features" not in older or not older["finalized_features"]
