"""The transaction coordinator (KIP-98): transactional ids, their producer ids and epochs, and
the two-phase commit of transactions through ``__transaction_state``.

=================  ================================================================
module             concept
=================  ================================================================
``config``         the ``transaction.*`` broker settings
``records``        the key and value schemas of ``__transaction_state`` records
``state``          a transaction's state machine (as a table) and its metadata
``topic``          creating ``__transaction_state``
``loader``         rebuilding transaction metadata from a partition's log
``manager``        the transactions of the owned partitions, and appends to the topic
``preamble``       the checks a request about a transactional id starts with
``markers``        writing COMMIT / ABORT markers, locally or via WriteTxnMarkers
``coordinator``    InitProducerId, AddPartitionsToTxn, EndTxn (Kafka's
                   ``TransactionCoordinator``)
``timeouts``       aborting transactions open longer than their timeout
``service``        a broker's coordinator, wired to its partitions and ZooKeeper
=================  ================================================================

Not done: transactional ids are never expired (``transactional.id.expiration.ms`` is read but
not acted on), so the Dead state is never entered; KIP-890's server-side defence (transaction
version 2, verification of produce requests on a broker that is not the coordinator) is not
implemented, as in a Kafka 3.9 cluster without it.
"""

from .config import TransactionConfig
from .coordinator import TransactionCoordinator
from .state import TransactionMetadata, TxnState

__all__ = ["TransactionConfig", "TransactionCoordinator", "TransactionMetadata", "TxnState"]
