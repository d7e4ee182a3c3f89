"""kspark: Kafka-protocol topics as a Spark data source and sink (``format("kpy")``)."""
