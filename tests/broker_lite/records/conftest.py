"""The record codec tests: ``codec_path`` runs a test on each implementation of the codecs
(``[python]`` and ``[compiled]`` in its id; see ``codec_paths.py`` beside this file)."""

from collections.abc import Iterator

import pytest

from .codec_paths import PATHS, on_path


@pytest.fixture(scope="module", params=PATHS)
def codec_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The implementation the test runs on, for the whole module: "python" or "compiled"."""
    with on_path(request.param):
        yield request.param


# The compiled functions' own argument checks exist only where they were built (no skip: a
# missing build where a compiler works fails test_native.py instead).
collect_ignore = [] if "compiled" in PATHS else ["test_native_compiled.py"]
