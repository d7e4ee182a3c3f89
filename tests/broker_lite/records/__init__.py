"""A package, so that this directory's conftest is not imported as a second top-level
``conftest`` module next to ``tests/conftest.py`` when doctests collect both."""
