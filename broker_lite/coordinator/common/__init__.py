"""What the group and transaction coordinators share: an internal compacted topic, its
partitions loaded and unloaded as this broker's leadership changes, its records appended and
replayed.

=======================  =====================================================================
module                   concept
=======================  =====================================================================
``partitioner``          which partition of an internal topic holds a key
``record_codec``         versioned coordinator records: an int16 version, then the body
``internal_topic``       the internal topics' names; creating one, its partition count
``append``               writing coordinator records to the log
``partition_replay``     reading an internal topic's partition from its log start
``partition_loading``    loading / unloading partitions as leadership changes
``metadata_manager``     the partitions a coordinator owns or loads (both managers' base)
``timer``                deadlines (sessions, rebalances, expiry, transaction timeouts)
=======================  =====================================================================
"""
