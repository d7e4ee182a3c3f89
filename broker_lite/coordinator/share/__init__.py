"""Share groups (KIP-932, "Queues for Kafka"): the share coordinator and ``__share_group_state``,
the share-partitions a broker leads, and share group membership.

It sits after :mod:`..group` in the coordinator's one-way order (common, then group, then
transaction and share, neither importing the other): a share group is coordinated where a
group of its id would be, so membership asks the group coordinator which groups are local.

======================  ===========================================================================
module                  concept
======================  ===========================================================================
``config``              the ``group.share.*`` and ``share.coordinator.*`` broker settings
``group_configs``       a share group's own settings (``share.auto.offset.reset``, ...)
``share_partition``     a share-partition's in-flight records, acquisition locks, delivery counts
                        and acknowledgements, as a state machine (pure logic)
``records``             the key and value schemas of ``__share_group_state`` (Kafka 4.2's)
``state``               a share-partition's persisted state at its share coordinator (pure logic)
``state_topic``         creating ``__share_group_state``; rebuilding states from a partition
``coordinator``         the share coordinator: the state APIs over ``__share_group_state``
``persister``           how a share-partition leader reaches its share coordinator
``partition_manager``   the share-partitions and share sessions of this broker
``group``               a share group's membership, epochs and assignment (pure logic)
``group_coordinator``   ShareGroupHeartbeat and ShareGroupDescribe with session timeouts
``service``             a broker's share groups, wired to its partitions and ZooKeeper
======================  ===========================================================================
"""
