"""Consumer groups: the group protocol of KIP-848, where the coordinator computes the
assignment and members only heartbeat (Kafka 4's ``GroupMetadataManager`` for groups of type
``consumer``), beside the classic groups of :mod:`..group`, in the same ``__consumer_offsets``.

=======================  =====================================================================
module                   concept
=======================  =====================================================================
``config``               the ``group.consumer.*`` settings and their bounds
``records``              the consumer group records of ``__consumer_offsets`` (types 3-8)
``regex``                subscriptions by regular expression, as RE2J matches them
``subscriptions``        the topics a group subscribes to, resolved against the cluster
``assignors``            the server-side assignors: ``uniform`` and ``range``
``target_assignment``    the target assignment of a group epoch, and its records
``reconciliation``       a member's way to its target: revoke before assign
``group``                a consumer group: members, epochs, owners, rebuilt from its records
``heartbeat``            ConsumerGroupHeartbeat as a pure function: response and records
``migration``            online conversion between classic and consumer groups
``loader``               rebuilding consumer groups while a partition loads
``manager``              both kinds of group of the owned partitions, and their offsets
``coordinator``          the coordinator of both protocols (timers, offsets, admin)
``service``              a broker's coordinator, wired to its partitions and the cluster
=======================  =====================================================================
"""
