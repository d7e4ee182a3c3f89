"""broker_lite: a lightweight broker keeping Kafka's log, message formats and wire protocol."""
