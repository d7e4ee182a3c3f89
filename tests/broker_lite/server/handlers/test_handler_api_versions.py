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
    K.LIST_OFFSETS: 8,      # v9: the last tiered offset (KIP-1005); no tiered storage here
}

# The share groups' APIs (KIP-932) at Kafka 4.2's versions, served with group.share.enable.
KAFKA_4_2_SHARE_GROUPS = {
    K.SHARE_GROUP_HEARTBEAT: (1, 1), K.SHARE_GROUP_DESCRIBE: (1, 1), K.SHARE_FETCH: (1, 2),
    K.SHARE_ACKNOWLEDGE: (1, 2), K.INITIALIZE_SHARE_GROUP_STATE: (0, 0),
    K.READ_SHARE_GROUP_STATE: (0, 0), K.WRITE_SHARE_GROUP_STATE: (0, 0),
    K.DELETE_SHARE_GROUP_STATE: (0, 0), K.READ_SHARE_GROUP_STATE_SUMMARY: (0, 0),
    K.DESCRIBE_SHARE_GROUP_OFFSETS: (0, 0), K.ALTER_SHARE_GROUP_OFFSETS: (0, 0),
    K.DELETE_SHARE_GROUP_OFFSETS: (0, 0),
}


def test_share_groups_add_their_apis_at_kafka_4_2s_versions():
    plain, shared = handlers(), handlers(share_groups=True)
    assert set(shared) - set(plain) == set(KAFKA_4_2_SHARE_GROUPS)
    assert {k: (h.min_version, h.max_version) for k, h in shared.items()
            if k in KAFKA_4_2_SHARE_GROUPS} == KAFKA_4_2_SHARE_GROUPS


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
    for key, handler in handlers(share_groups=True).items():
        schema = API_SCHEMAS[key]
        for version in range(handler.min_version, handler.max_version + 1):
            assert version in schema.request.valid_versions, (key.name, version)
            assert version in schema.response.valid_versions, (key.name, version)


def test_the_group_version_feature_is_finalized(harness):
    # v4 lists every supported feature; v3 leaves out those whose range starts at 0 (KAFKA-17011)
    response = harness.call(ApiKey.API_VERSIONS, 4, {"client_software_name": "t",
                                                     "client_software_version": "1"})
    assert {"name": "group.version", "min_version": 0, "max_version": 1} in \
        response["supported_features"]
    assert response["finalized_features"] == [
        {"name": "group.version", "min_version_level": 1, "max_version_level": 1}]
    assert response["finalized_features_epoch"] == 0
    v3 = harness.call(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                               "client_software_version": "1"})
    assert v3["finalized_features"] == response["finalized_features"]
    assert v3["supported_features"] == []
    older = harness.call(ApiKey.API_VERSIONS, 2, {})
    assert "finalized_features" not in older or not older["finalized_features"]
