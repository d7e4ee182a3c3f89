"""The package layers run one way (README, "Layout"): broker_lite, the Kafka layer, never imports
the Spark connector, and no two subpackages import each other in a circle. The imports are read
from the source with ast, every one of them, including those inside functions."""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imports_of(path: Path, package: str) -> set[str]:
    """The absolute names of the modules ``path`` (a module of ``package``) imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = package.split(".")
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def modules(top: str) -> dict[str, Path]:
    """Module name -> file, for every module of the package ``top``."""
    found = {}
    for path in sorted((ROOT / top).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def test_broker_lite_never_imports_kspark():
    offenders = sorted(
        f"{module} imports {name}"
        for module, path in modules("broker_lite").items()
        for name in imports_of(path, package_of(module, path))
        if name == "kspark" or name.startswith("kspark."))
    assert offenders == []


def subpackage(module: str) -> str:
    """The first-level unit a module belongs to: ``broker_lite.log.segment`` ->
    ``broker_lite.log``; a top-level module (``broker_lite.config.broker``) is a unit of its own."""
    return ".".join(module.split(".")[:2])


def import_graph(top: str) -> dict[str, set[str]]:
    """Subpackage -> the other subpackages of ``top`` that its modules import."""
    known = modules(top)
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        for name in imports_of(path, package_of(module, path)):
            while name and name not in known:  # ``from a.b import name`` of a non-module
                name = name.rpartition(".")[0]
            if name and subpackage(name) != subpackage(module):
                graph[subpackage(module)].add(subpackage(name))
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every node that can reach itself, with one path that does, as ``a -> b -> a``."""
    cycles = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    cycles.append(" -> ".join(trail + [start]))
                    stack.clear()
                    break
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, trail + [nxt]))
    return cycles


def test_find_cycles_finds_a_cycle_and_only_cycles():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        "a -> b -> c -> a", "b -> c -> a -> b", "c -> a -> b -> c"]
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize("top", ["broker_lite", "kspark"])
def test_no_import_cycle_between_subpackages(top):
    graph = import_graph(top)
    assert graph, "no imports found: the walk is broken"
    assert find_cycles(graph) == []
