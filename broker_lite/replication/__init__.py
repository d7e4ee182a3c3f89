"""Replication as ZooKeeper-mode Kafka 2.x/3.x does it: one module per concept.

========================  =====================================================================
module                    what it holds
========================  =====================================================================
:mod:`.partition`         a partition's replica on this broker (Kafka's ``Partition``): leader
                          or follower, the ISR, each follower's progress, the high watermark,
                          acks=all and ``min.insync.replicas``, the follower side's appends
:mod:`.replica`           what a leader knows of one follower (``ReplicaState``): its log end,
                          and since when it is caught up
:mod:`.isr`               the leader's ISR writes to the state znode and the notifications to
                          the controller (``ZkAlterPartitionManager``)
:mod:`.fetcher`           the followers' fetcher threads (``ReplicaFetcherThread``): truncation
                          by leader epoch (KIP-101/279), then Fetch requests with a replica id
:mod:`.partition_manager`  this broker's partitions in step with ZooKeeper's assignments: each
                          led or followed as the controller decides (Kafka's ``ReplicaManager``)
:mod:`.errors`            why an append is refused
========================  =====================================================================

:mod:`.partition_manager` gives each partition held here its role as the controller
(:mod:`broker_lite.controller`) decides; the request handlers of :mod:`broker_lite.server` serve
the followers' fetches and wait for the ISR.
"""
