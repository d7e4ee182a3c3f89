"""The transaction coordinator's settings, read from the broker's (Kafka's names and defaults).

==============================================================  =========  ====================
broker setting                                                  default    meaning
==============================================================  =========  ====================
transaction.state.log.num.partitions                            50         partitions of
                                                                           ``__transaction_state``
transaction.state.log.replication.factor                        3          its replicas (fewer
                                                                           when fewer brokers)
transaction.state.log.segment.bytes                             104857600  its segment size
transaction.state.log.load.buffer.size                          5242880    bytes read at a time
                                                                           when loading
transaction.max.timeout.ms                                      900000     longest timeout a
                                                                           producer may ask for
transaction.abort.timed.out.transaction.cleanup.interval.ms     10000      how often expired
                                                                           transactions are
                                                                           aborted
transactional.id.expiration.ms                                  604800000  (read, not acted on)
transaction.state.log.min.isr                                   2          min.insync.replicas
                                                                           of the topic
request.timeout.ms                                              30000      how long a write
                                                                           waits for the ISR
==============================================================  =========  ====================
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class TransactionConfig:
    num_partitions: int = 50
    replication_factor: int = 3
    segment_bytes: int = 104857600
    load_buffer_size: int = 5 * 1024 * 1024
    max_timeout_ms: int = 900_000
    abort_timed_out_interval_ms: int = 10_000
    transactional_id_expiration_ms: int = 604_800_000
    min_isr: int = 2
    # Kafka writes transaction state with acks=all, waiting up to request.timeout.ms
    replication_timeout_ms: int = 30_000

    @classmethod
    def from_broker_config(cls, config) -> "TransactionConfig":
        return cls(
            num_partitions=config["transaction.state.log.num.partitions"],
            replication_factor=config["transaction.state.log.replication.factor"],
            segment_bytes=config["transaction.state.log.segment.bytes"],
            load_buffer_size=config["transaction.state.log.load.buffer.size"],
            max_timeout_ms=config["transaction.max.timeout.ms"],
            abort_timed_out_interval_ms=config[
                "transaction.abort.timed.out.transaction.cleanup.interval.ms"],
            transactional_id_expiration_ms=config["transactional.id.expiration.ms"],
            min_isr=config["transaction.state.log.min.isr"],
            replication_timeout_ms=config["request.timeout.ms"],
        )
