"""The settings shipped inside the package are those of the documented template,
conf/server.properties, and the default data directory follows the XDG rules."""

import warnings
from pathlib import Path

from broker_lite.config import defaults
from broker_lite.config.broker import BrokerConfig
from broker_lite.config.properties import read_properties

ROOT = Path(__file__).resolve().parents[3]


def test_the_shipped_defaults_are_the_settings_of_conf_server_properties():
    assert defaults.server_properties() == read_properties(ROOT / "conf" / "server.properties")


def test_the_shipped_defaults_are_kafkas_names_with_a_loopback_listener_and_embedded_zookeeper():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unknown name warns
        config = BrokerConfig(defaults.server_properties())
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9092"
    assert config["zookeeper.connect"] is None
    assert config["log.dirs"] is None  # broker-lite start puts the data in data_dir()


def test_the_data_directory_is_under_xdg_state_home(monkeypatch, tmp_path):
    assert defaults.data_dir({"XDG_STATE_HOME": str(tmp_path)}) == tmp_path / "broker-lite"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "state" / "broker-lite"
    assert defaults.data_dir({}) == expected
    assert defaults.data_dir({"XDG_STATE_HOME": ""}) == expected
    assert defaults.data_dir({"XDG_STATE_HOME": "relative/state"}) == expected  # ignored


def test_the_shipped_registry_defaults_are_conf_schema_registry_properties():
    from broker_lite.registry.config import RegistryConfig

    shipped = defaults.registry_properties()
    assert shipped == read_properties(ROOT / "conf" / "schema-registry.properties")
    config = RegistryConfig(shipped)
    assert config.listeners == ["http://127.0.0.1:8081"]
    assert config.client_settings() == {"bootstrap.servers": "127.0.0.1:9092"}
    assert config["schema.compatibility.level"] == "BACKWARD"
