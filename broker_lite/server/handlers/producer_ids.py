"""InitProducerId: a producer id and epoch for an idempotent producer.

Producer ids come from the broker's producer id manager (in a broker, blocks taken from
ZooKeeper's ``/latest_producer_id_block``: see :mod:`broker_lite.zk.producer_ids`), so they are
unique across the cluster and across restarts.

Answers, as Kafka 3.9's for a producer without a transactional id:

- a new producer id with epoch 0, every time; also when the request (version 3+) carries the
  producer's current id and epoch to resume with, since only a transaction coordinator keeps
  epochs to bump (KIP-360);
- INVALID_REQUEST when only one of producer id and epoch is given, or the transactional id is
  the empty string;
- COORDINATOR_NOT_AVAILABLE, retriable, while ZooKeeper cannot be reached or the broker is not
  registered yet.

With a transactional id the transaction coordinator answers (see
:meth:`~broker_lite.coordinator.transaction.TransactionCoordinator.handle_init_producer_id`):
the id's producer id with its epoch bumped, fencing earlier instances; the first request for a
transactional id creates ``__transaction_state`` and is answered COORDINATOR_NOT_AVAILABLE,
which clients retry. PRODUCER_FENCED is answered INVALID_PRODUCER_EPOCH before version 4.

Authorization comes first, as in Kafka: a transactional id needs Write on it
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer IdempotentWrite on the cluster
or Write on at least one topic (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.
"""

import logging

from broker_lite.common.vocabulary import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from broker_lite.coordinator.transaction.coordinator import InitProducerIdResult
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.zk.errors import ProducerIdsExhaustedError, ProducerIdsUnavailableError

from ..authorization import authorize_by_resource_type
from ..dispatcher import RequestContext
from ..errors import error_code_for
from .coordinator import create_coordinator_topic
from .transactions import fenced_error

logger = logging.getLogger(__name__)


def init_producer_id(context: RequestContext, body: dict) -> dict:
    transactional_id = body["transactional_id"]
    refusal = _refusal(context, transactional_id)
    if refusal is not None:
        return _response(refusal)
    producer_id = body.get("producer_id", NO_PRODUCER_ID)
    epoch = body.get("producer_epoch", NO_PRODUCER_EPOCH)
    if (producer_id == NO_PRODUCER_ID) != (epoch == NO_PRODUCER_EPOCH):
        return _response(ErrorCode.INVALID_REQUEST)
    if transactional_id == "":
        return _response(ErrorCode.INVALID_REQUEST)
    services = context.services
    try:
        if transactional_id is None:
            result = InitProducerIdResult(ErrorCode.NONE, services.producer_ids.generate(), 0)
        else:
            result = _transactional(context, transactional_id, body["transaction_timeout_ms"],
                                    None if producer_id == NO_PRODUCER_ID else (producer_id, epoch))
    except ProducerIdsUnavailableError as exc:  # retriable
        logger.warning("no producer id: %s", exc)
        return _response(error_code_for(exc))
    except ProducerIdsExhaustedError:
        logger.exception("no producer id left")
        return _response(ErrorCode.UNKNOWN_SERVER_ERROR)
    return _response(fenced_error(result.error, context.version, 4), result.producer_id,
                     result.producer_epoch)


def _refusal(context: RequestContext, transactional_id: str | None) -> ErrorCode | None:
    if transactional_id is not None:
        if not context.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                 transactional_id):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not context.authorize(AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER,
                               log_denied=False) and \
            not authorize_by_resource_type(context, AclOperation.WRITE, ResourceType.TOPIC):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None


def _transactional(context: RequestContext, transactional_id: str, timeout_ms: int,
                   expected: tuple[int, int] | None) -> InitProducerIdResult:
    services = context.services
    coordinator = services.transactions
    if services.cluster.partition_count(coordinator.topic) is None:
        create_coordinator_topic(coordinator)
        return InitProducerIdResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    return coordinator.handle_init_producer_id(transactional_id, timeout_ms, expected)


def _response(error: ErrorCode, producer_id: int = NO_PRODUCER_ID,
              epoch: int = NO_PRODUCER_EPOCH) -> dict:
    return {"throttle_time_ms": 0, "error_code": error, "producer_id": producer_id,
            "producer_epoch": epoch}
