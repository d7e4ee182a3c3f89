"""Spark starts Python processes that unpickle the source and read with it: a fresh one per
streaming query for the stream reader (PySpark's ``python_streaming_source_runner``), and new
workers as it needs them. Each imports ``kspark.datasource`` and ``kspark.source`` before it
does anything, so what those import is paid at every start: the producer, the admin clients,
the transactions and the broker's own configuration stay out until something asks for them."""

import json
import subprocess
import sys

NOT_FOR_READING = ["broker_lite.client.admin", "broker_lite.client.producer",
                   "broker_lite.client.sender", "broker_lite.client.transactions",
                   "broker_lite.client.acls_admin", "broker_lite.client.groups_admin",
                   "broker_lite.config", "kspark.sink"]


def loaded_after(statement: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{statement}\nimport json, sys\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    return set(json.loads(out))


def test_the_source_loads_no_producer_admin_or_broker_configuration():
    loaded = loaded_after("import kspark.datasource, kspark.source")
    assert "broker_lite.client.client" in loaded  # the reading client itself is there
    assert sorted(loaded & set(NOT_FOR_READING)) == []


def test_the_client_package_gives_every_name_it_lists_when_asked():
    loaded = loaded_after("from broker_lite.client import Producer, KafkaClient\n"
                          "import broker_lite.client as c\n"
                          "assert all(getattr(c, name) for name in c.__all__)")
    assert {"broker_lite.client.producer", "broker_lite.client.admin"} <= loaded
