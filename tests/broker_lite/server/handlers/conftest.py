import pytest

from .handler_support import Harness


@pytest.fixture
def harness(tmp_path):
    """Broker 1's services on ``tmp_path`` (see handler_support)."""
    harness = Harness(tmp_path)
    yield harness
    harness.close()
