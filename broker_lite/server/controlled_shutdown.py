"""A broker's controlled shutdown (Kafka's ``KafkaServer.controlledShutdown``): before it stops,
a broker with ``controlled.shutdown.enable`` asks the controller, with a ControlledShutdown
request (key 7) carrying its id and broker epoch (the creation zxid of its registration), to
move away the leadership of its partitions that have other replicas in sync, and to take it out
of their ISRs. Leadership then changes while the broker still answers (its clients get
NOT_LEADER_OR_FOLLOWER and find the new leader), rather than after its ZooKeeper session
expired, and no acknowledged record depends on it. The controller answers with the partitions
the broker still leads (those without another replica in sync); the broker asks again after
``controlled.shutdown.retry.backoff.ms``, at most ``controlled.shutdown.max.retries`` times,
then shuts down anyway, as Kafka does. A controller that moved or cannot be reached counts as a
failed attempt.

Kafka sends the request with its inter-broker client; here the broker's own client connection
(:class:`~broker_lite.client.cluster.connection.BrokerConnection`) carries it, to the controller's
registered address.
"""

import logging
import time
from collections.abc import Callable, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

from broker_lite.client.cluster.connection import BrokerConnection
from broker_lite.client.config import ClientConfig
from broker_lite.client.errors import KafkaClientError
from broker_lite.client.retry import Deadline
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.zk.layout import BrokerIdZNode

logger = logging.getLogger(__name__)


def controlled_shutdown(client: KazooClient, broker_id: int,
                        controller: Callable[[], tuple[int, tuple[str, int] | None]], *,
                        max_retries: int = 3, backoff_ms: int = 5000,
                        timeout_ms: int = 30000, sleep: Callable[[float], None] = time.sleep,
                        security: Mapping[str, str] | None = None) -> bool:
    """Ask the controller to move this broker's leadership away; whether it succeeded.
    ``controller()`` gives the controller's id and address on the inter-broker listener (None
    while unknown), ``security`` that listener's client settings (TLS, SASL)."""
    try:
        stat = client.exists(BrokerIdZNode.path(broker_id))
    except KazooException:
        stat = None
    if stat is None:
        logger.info("broker %d: not registered, no controlled shutdown", broker_id)
        return False
    broker_epoch = stat.czxid
    for attempt in range(1, max_retries + 1):
        controller_id, address = controller()
        if address is None:
            logger.info("broker %d: controlled shutdown attempt %d: no controller known",
                        broker_id, attempt)
        else:
            outcome = _ask(broker_id, broker_epoch, controller_id, address, timeout_ms,
                           security or {})
            if outcome is True:
                logger.info("broker %d: controlled shutdown succeeded", broker_id)
                return True
            logger.info("broker %d: controlled shutdown attempt %d: %s", broker_id, attempt,
                        outcome)
        if attempt < max_retries:
            sleep(backoff_ms / 1000)
    logger.warning("broker %d: controlled shutdown did not complete after %d attempts; "
                   "shutting down anyway", broker_id, max_retries)
    return False


def _ask(broker_id: int, broker_epoch: int, controller_id: int, address: tuple[str, int],
         timeout_ms: int, security: Mapping[str, str]) -> bool | str:
    host, port = address
    connection = BrokerConnection(host, port, ClientConfig({
        **security, "bootstrap.servers": f"{host}:{port}",
        "client.id": f"broker-{broker_id}-shutdown", "request.timeout.ms": str(timeout_ms)}),
        node_id=controller_id)
    try:
        _version, response = connection.request(
            ApiKey.CONTROLLED_SHUTDOWN, {"broker_id": broker_id, "broker_epoch": broker_epoch},
            Deadline(timeout_ms))
    except KafkaClientError as exc:
        return f"controller {controller_id} at {host}:{port} could not be reached: {exc}"
    finally:
        connection.close()
    error = ErrorCode(response["error_code"])
    remaining = [f"{p['topic_name']}-{p['partition_index']}"
                 for p in response["remaining_partitions"]]
    if error == ErrorCode.NONE and not remaining:
        return True
    if error != ErrorCode.NONE:
        return f"controller {controller_id} answered {error.name}"
    return f"still leading {', '.join(sorted(remaining))}"
