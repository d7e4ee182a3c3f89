"""Producing: :mod:`.partitioner` (Kafka's default partitioner), :mod:`.batching` (cutting rows
into batches), :mod:`.producer` (idempotent and transactional producing), :mod:`.sender`
(delivering its batches) and :mod:`.transactions` (the transaction coordinator's APIs)."""
