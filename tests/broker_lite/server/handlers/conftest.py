import pytest

from .handler_support import Harness


@pytest.fixture
def harness(tmp_path):
    """Broker 1's services on ``tmp_path`` (see handler_support)."""
    harness = Harness(tmp_path)
    yield harness
    harness.close()


@pytest.fixture
def old_protocol_harness(tmp_path):
    """A harness whose broker speaks inter-broker protocol 2.8, so that topics keep the message
    format their ``message.format.version`` names (ignored from 3.0, as in Kafka)."""
    harness = Harness(tmp_path, {"inter.broker.protocol.version": "2.8"})
    yield harness
    harness.close()
