"""The network layer's settings, with Kafka's names and defaults (see
:mod:`broker_lite.config.broker`).

Each field is the broker config of the same name with dots for underscores.

>>> from broker_lite.config.broker import BrokerConfig
>>> config = NetworkConfig.of(BrokerConfig({"num.network.threads": "2"}))
>>> config.num_network_threads, config.queued_max_requests, config.max_connections_per_ip
(2, 500, 2147483647)
"""

from dataclasses import dataclass, fields

from broker_lite.common.vocabulary import INT32_MAX
from broker_lite.config.broker import BrokerConfig


@dataclass(frozen=True)
class NetworkConfig:
    num_network_threads: int = 3
    num_io_threads: int = 8
    queued_max_requests: int = 500
    socket_request_max_bytes: int = 104857600
    connections_max_idle_ms: int = 600000  # -1: never closed for idleness
    socket_send_buffer_bytes: int = 102400  # -1: the OS's default
    socket_receive_buffer_bytes: int = 102400
    socket_listen_backlog_size: int = 50
    max_connections: int = INT32_MAX
    max_connections_per_ip: int = INT32_MAX
    max_connections_per_ip_overrides: str = ""
    connection_failed_authentication_delay_ms: int = 100

    @classmethod
    def of(cls, config: BrokerConfig) -> "NetworkConfig":
        return cls(**{f.name: config[f.name.replace("_", ".")] for f in fields(cls)})

    @property
    def idle_timeout_s(self) -> float | None:
        ms = self.connections_max_idle_ms
        return None if ms < 0 else ms / 1000
