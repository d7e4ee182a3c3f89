"""The payload codec tests: ``codec_path`` runs a test on each implementation of the codecs
(``[python]`` and ``[compiled]`` in its id; see ``tests/codec_paths.py``)."""

from collections.abc import Iterator

import pytest
from codec_paths import CodecPaths

from broker_lite.serde import _native

SERDE = CodecPaths(_native)


@pytest.fixture(scope="module", params=SERDE.paths)
def codec_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The implementation the test runs on, for the whole module: "python" or "compiled"."""
    with SERDE.on_path(request.param):
        yield request.param
