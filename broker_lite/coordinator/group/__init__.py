"""The group coordinator: consumer groups and their committed offsets in ``__consumer_offsets``
(Kafka's ``GroupCoordinator``, classic protocol).

=======================  =====================================================================
module                   concept
=======================  =====================================================================
``records``              the key and value schemas of ``__consumer_offsets`` records
``offsets``              committed offsets and their expiry
``consumer_protocol``    the consumer embedded protocol: subscriptions and assignments
``group``                a group's state machine, members, generation and protocol
``config``               the ``group.*`` and ``offsets.*`` broker settings
``offsets_topic``        creating ``__consumer_offsets``
``loader``               rebuilding groups and offsets from the log
``manager``              the groups of the owned partitions, and the offsets cache
``offset_coordinator``   OffsetCommit, OffsetFetch, OffsetDelete
``txn_offset_commit``    transactional offset commits, pending until their marker
``coordinator``          the classic group protocol, and the facade (Kafka's GroupCoordinator)
``service``              a broker's group coordinator, wired to its partitions and ZooKeeper
=======================  =====================================================================
"""
