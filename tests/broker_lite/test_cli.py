"""``broker-lite start``'s arguments: which settings it runs with, and clear usage errors. (Brokers
started by the command: tests/broker_lite/test_start_command.py.)"""

import subprocess
import sys
from pathlib import Path

import pytest

from broker_lite.cli import UsageError, main, start_properties
from broker_lite.config import defaults

BROKER_LITE = Path(sys.executable).with_name("broker-lite")


@pytest.fixture
def state_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def test_without_a_file_the_shipped_defaults_apply_with_the_data_in_the_state_directory(
        state_home):
    properties = start_properties(None, {"num.partitions": "3"})
    assert properties == {**defaults.server_properties(), "num.partitions": "3",
                          "log.dirs": str(state_home / "broker-lite")}


def test_a_given_file_replaces_the_defaults(state_home, tmp_path):
    path = tmp_path / "mine.properties"
    path.write_text("broker.id=4\n")
    assert start_properties(str(path), {}) == {"broker.id": "4",
                                               "log.dirs": str(state_home / "broker-lite")}


@pytest.mark.parametrize("overrides", [{"log.dirs": "/data/a,/data/b"}, {"log.dir": "/data/c"}])
def test_a_log_dir_from_the_file_or_an_override_is_kept(state_home, tmp_path, overrides):
    assert start_properties(None, overrides) == {**defaults.server_properties(), **overrides}
    path = tmp_path / "mine.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in overrides.items()))
    assert start_properties(str(path), {}) == overrides


def test_a_missing_file_is_a_usage_error_that_says_so(tmp_path, capsys):
    with pytest.raises(UsageError, match=r"no such properties file: .*none\.properties"):
        start_properties(str(tmp_path / "none.properties"), {})
    with pytest.raises(UsageError, match="no such properties file"):
        start_properties(str(tmp_path), {})  # a directory is no file
    assert main(["start", str(tmp_path / "none.properties")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("broker-lite: no such properties file: ") and "defaults" in error


def test_a_malformed_override_or_value_is_a_usage_error(state_home, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["start", "--override", "num.partitions"])
    assert exited.value.code == 2
    assert "--override: expected key=value, got 'num.partitions'" in capsys.readouterr().err
    assert main(["start", "--override", "num.partitions=zero"]) == 2
    assert "num.partitions" in capsys.readouterr().err


def test_python_m_broker_lite_is_the_broker_lite_command():
    def run(*command: str) -> subprocess.CompletedProcess:
        return subprocess.run([*command, "start", "--help"], capture_output=True, text=True,
                              timeout=120)

    script, module = run(str(BROKER_LITE)), run(sys.executable, "-m", "broker_lite")
    assert script.returncode == module.returncode == 0
    assert script.stdout == module.stdout
    assert "without a properties file it runs with the built-in defaults" in \
        " ".join(module.stdout.split()).lower()
