"""The controller of a ZooKeeper-mode cluster (Kafka's ``kafka.controller``): one broker, elected
through ``/controller``, that watches the cluster's znodes and decides partition leaders.

=================  ================================================================
module             concept
=================  ================================================================
``elections``      choosing a leader and ISR for a partition (offline, preferred,
                   unclean, controlled shutdown), as pure functions of its state
``reassignment``   the steps of a partition reassignment (KIP-455)
``controller``     the controller itself: candidacy, the events it handles, the
                   partition states it writes
=================  ================================================================

It builds on :mod:`broker_lite.zk` (the znodes, the event loop that handles their watches) and
is started by the broker's membership of the cluster, :mod:`broker_lite.server.zk_broker`.
"""

from .controller import Controller, ControllerSettings

__all__ = ["Controller", "ControllerSettings"]
