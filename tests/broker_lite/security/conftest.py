"""Fixtures of the security tests."""

import pytest

import broker_lite.server.dispatcher as dispatcher_module


@pytest.fixture
def principals(monkeypatch):
    """The (listener, principal) of every request the broker's handlers see."""
    seen = []

    class Recorded(dispatcher_module.RequestContext):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if self.listener is not None:  # not an ApiVersions answered before a SASL login
                seen.append((self.listener, self.principal))

    monkeypatch.setattr(dispatcher_module, "RequestContext", Recorded)
    return seen
