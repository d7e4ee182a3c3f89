"""The controller's question to a broker that announced a failed log dir: which of these
partitions do you hold in an offline log dir?

Kafka's controller asks with LeaderAndIsr and reads the KAFKA_STORAGE_ERROR of its answer's
partitions (``KafkaController.onBrokerLogDirFailure``, KIP-112). broker_lite's brokers take no
LeaderAndIsr (they follow the state znodes), so the question is an OffsetForLeaderEpoch
request as the debugging replica (-2), which every replica of a partition answers, not only its
leader: a replica whose log dir is offline answers KAFKA_STORAGE_ERROR, any other an epoch (or
an error of its own, which says nothing about its log dir). It goes to the broker's
inter-broker listener, with the inter-broker security settings, as the controller's requests
do in Kafka.
"""

from collections.abc import Callable, Mapping

from broker_lite.client.cluster.connection import BrokerConnection
from broker_lite.client.config import ClientConfig
from broker_lite.client.retry import Deadline
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import DEBUGGING_REPLICA_ID

TIMEOUT_MS = 10_000


def offline_replicas(address: tuple[str, int], partitions: list[TopicPartition], *,
                     security: Mapping[str, str], controller_id: int,
                     timeout_ms: int = TIMEOUT_MS) -> set[TopicPartition]:
    """Which of ``partitions`` the broker at ``address`` holds in an offline log dir (raises
    :class:`~broker_lite.client.errors.KafkaClientError` when it does not answer)."""
    if not partitions:
        return set()
    host, port = address
    topics: dict[str, list[dict]] = {}
    for tp in sorted(partitions):
        topics.setdefault(tp.topic, []).append(
            {"partition": tp.partition, "current_leader_epoch": -1, "leader_epoch": 0})
    connection = BrokerConnection(host, port, ClientConfig({
        **security, "bootstrap.servers": f"{host}:{port}",
        "client.id": f"controller-{controller_id}", "request.timeout.ms": str(timeout_ms)}))
    try:
        _version, response = connection.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, {
            "replica_id": DEBUGGING_REPLICA_ID,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()]},
            Deadline(timeout_ms))
    finally:
        connection.close()
    return {TopicPartition(topic["topic"], answer["partition"])
            for topic in response["topics"] for answer in topic["partitions"]
            if answer["error_code"] == ErrorCode.KAFKA_STORAGE_ERROR}


def asker(address_of: Callable[[int], tuple[str, int] | None], *,
          security: Mapping[str, str], controller_id: Callable[[], int]
          ) -> Callable[[int, list[TopicPartition]], set[TopicPartition]]:
    """The controller's ``offline_replicas_of``: :func:`offline_replicas` of a broker by id,
    found where ``address_of`` says it listens to other brokers."""
    def ask(broker_id: int, partitions: list[TopicPartition]) -> set[TopicPartition]:
        address = address_of(broker_id)
        if address is None:
            raise OSError(f"broker {broker_id} is not registered")
        return offline_replicas(address, partitions, security=security,
                                controller_id=controller_id())
    return ask
