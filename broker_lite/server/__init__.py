"""The broker process: network layer, request handlers, and the wiring of log, ZooKeeper and
both."""
