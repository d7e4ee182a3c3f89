"""What every layer of broker_lite shares, below all of them (as Kafka's
``org.apache.kafka.common``): :mod:`.vocabulary` (a topic partition, Kafka's sentinels for
"none", integer bounds, the clock), :mod:`.lazy_exports` (packages that import a module when one
of its names is first asked for) and :mod:`.foreground` (running a server until SIGINT or
SIGTERM). Nothing here imports anything else of the project."""
