"""README.md shows the pytest plugin's example tests: the block after ``<!-- plugin-example -->``
is tests/kspark/testing/test_plugin_example.py, the one after ``<!-- fault-example -->``
tests/kspark/testing/test_fault_example.py, and the one after ``<!-- registry-example -->``
tests/broker_lite/registry/test_registry_example.py, which the suite runs, word for word."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {"<!-- plugin-example -->": Path(__file__).with_name("test_plugin_example.py"),
            "<!-- fault-example -->": Path(__file__).with_name("test_fault_example.py"),
            "<!-- registry-example -->":
                ROOT / "tests" / "broker_lite" / "registry" / "test_registry_example.py"}


def readme_block(marker: str) -> str | None:
    """The first fenced block after the line ``marker`` in README.md, or None."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    if marker not in lines:
        return None
    after = lines[lines.index(marker) + 1:]
    fences = [i for i, line in enumerate(after) if line.startswith("```")]
    if len(fences) < 2:
        return None
    return "\n".join(after[fences[0] + 1:fences[1]]) + "\n"


@pytest.mark.parametrize("marker", sorted(EXAMPLES))
def test_the_readme_shows_the_example_test_that_runs(marker):
    block = readme_block(marker)
    assert block is not None, f"README.md has no fenced block after a line {marker}"
    assert block == EXAMPLES[marker].read_text(encoding="utf-8")
