"""kspark.client and kspark.arrow moved into the Kafka layer (broker_lite.client,
broker_lite.records.arrow); imports under the old names give the very same modules, so classes
and exceptions compare and match across both names."""

import importlib

import pytest


@pytest.mark.parametrize(("old", "new"), [
    ("kspark.client", "broker_lite.client"),
    ("kspark.client.errors", "broker_lite.client.errors"),
    ("kspark.client.zkgroup", "broker_lite.client.zkgroup"),
    ("kspark.client.zkgroup.config", "broker_lite.client.zkgroup.config"),
    ("kspark.arrow", "broker_lite.records.arrow"),
    ("kspark.arrow.decode", "broker_lite.records.arrow.decode"),
])
def test_an_old_module_name_is_the_new_module(old, new):
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # the module keeps its own name


def test_classes_imported_under_both_names_are_one():
    from kspark.client.errors import ConfigError as OldConfigError

    from broker_lite.client.errors import ConfigError
    from kspark.client import KafkaClient

    assert OldConfigError is ConfigError
    assert KafkaClient.__module__ == "broker_lite.client.client"


def test_a_name_that_never_existed_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("kspark.client.no_such_module")
