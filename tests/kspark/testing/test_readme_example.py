"""README.md shows the pytest plugin's example tests: the block after ``<!-- plugin-example -->``
is tests/kspark/testing/test_plugin_example.py, and the one after ``<!-- registry-example -->``
tests/broker_lite/registry/test_registry_example.py, which the suite runs, word for word."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = Path(__file__).with_name("test_plugin_example.py")
MARKER = "<!-- plugin-example -->"
REGISTRY_EXAMPLE = ROOT / "tests" / "broker_lite" / "registry" / "test_registry_example.py"
REGISTRY_MARKER = "<!-- registry-example -->"


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


def test_the_readme_shows_the_example_test_that_runs():
    block = readme_block(MARKER)
    assert block is not None, f"README.md has no fenced block after a line {MARKER}"
    assert block == EXAMPLE.read_text(encoding="utf-8")


def test_the_readme_shows_the_registry_example_test_that_runs():
    block = readme_block(REGISTRY_MARKER)
    assert block is not None, f"README.md has no fenced block after a line {REGISTRY_MARKER}"
    assert block == REGISTRY_EXAMPLE.read_text(encoding="utf-8")
