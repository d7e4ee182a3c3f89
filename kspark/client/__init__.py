"""The Kafka client now lives in :mod:`broker_lite.client`; ``kspark.client`` and its submodules
(``kspark.client.errors``, ``kspark.client.zkgroup``, ...) remain the same modules under their
old names."""

from kspark._aliases import alias_package

alias_package(__name__, "broker_lite.client")
