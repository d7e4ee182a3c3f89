"""The whole Kafka stack on one machine, for notebooks, pipeline tests and the demo.

==================  ==========================================================================
module              concept
==================  ==========================================================================
``kafka``           ``LocalKafka``: broker_lite and its embedded ZooKeeper, in this process,
                    or (``brokers=3``) a replicated cluster of broker processes
``cluster``         ``LocalCluster``: broker processes sharing an embedded ZooKeeper, to kill,
                    stop and start again
``security``        certificates made at run time, PLAIN and SCRAM users, a client's settings
``bench_replication``  the acks=all benchmark on a local cluster
==================  ==========================================================================

>>> from broker_lite.local import LocalKafka
"""

from broker_lite.common.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    ".kafka": ("LocalKafka",),
    ".cluster": ("BrokerProcess", "LocalCluster"),
    ".security": ("LocalSecurity",),
})

__all__ = ["BrokerProcess", "LocalCluster", "LocalKafka", "LocalSecurity"]
