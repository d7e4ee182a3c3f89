"""Producer id blocks from ``/latest_producer_id_block``, as Kafka's ``ProducerIdManager`` takes
them: read the latest block and its znode version, write the next block conditionally on that
version, and start over when another broker wrote first. Blocks are therefore disjoint and
consecutive across the cluster; the first is ``0 .. block_size - 1``.
"""

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NoNodeError

from .errors import ProducerIdsExhaustedError
from .layout import ProducerIdBlock, ProducerIdBlockZNode

PRODUCER_ID_BLOCK_SIZE = 1000
_LONG_MAX = 2**63 - 1


def allocate_producer_id_block(client: KazooClient, broker_id: int,
                               block_size: int = PRODUCER_ID_BLOCK_SIZE) -> ProducerIdBlock:
    """Take the next block of ``block_size`` producer ids for ``broker_id``."""
    path = ProducerIdBlockZNode.PATH
    while True:
        try:
            data, stat = client.get(path)
        except NoNodeError:
            client.ensure_path(path)
            continue
        latest = ProducerIdBlockZNode.decode(data, path)
        if latest is None:
            block = ProducerIdBlock(broker_id, 0, block_size - 1)
        elif latest.block_end > _LONG_MAX - block_size:
            raise ProducerIdsExhaustedError(
                f"all producer ids are taken: {path} ends at {latest.block_end}")
        else:
            block = ProducerIdBlock(broker_id, latest.block_end + 1, latest.block_end + block_size)
        try:
            client.set(path, ProducerIdBlockZNode.encode(block), version=stat.version)
        except BadVersionError:
            continue  # another broker took a block since we read; read it and go on from there
        return block
