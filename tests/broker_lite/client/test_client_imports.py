"""The modules of broker_lite.client import one way: the facade (:mod:`broker_lite.client.client`)
builds on the producer, the sender and the transactions, and none of them imports it back, nor
do any two modules import each other in a circle. Imports for annotations only (under
``if TYPE_CHECKING:``) do not count; imports inside functions do."""

import ast
from pathlib import Path

import broker_lite.client

PACKAGE = "broker_lite.client"
ROOT = Path(broker_lite.client.__file__).parent


def runtime_imports(path: Path, package: str) -> set[str]:
    """The absolute names a module imports when it runs, ``from a import b`` giving ``a`` and
    ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                  "typing.TYPE_CHECKING"):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            here = package.split(".")
            module = ".".join(here[:len(here) - node.level + 1] + [node.module or ""]) \
                if node.level else node.module or ""
            module = module.rstrip(".")
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def module_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (packages' ``__init__`` left out: they
    gather names, and a module importing a sibling runs its package's ``__init__`` first)."""
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        if path.name != "__init__.py":
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join((PACKAGE, *parts))] = path
    graph = {}
    for module, path in modules.items():
        imported = runtime_imports(path, module.rpartition(".")[0])
        graph[module] = {name for name in imported if name in modules and name != module}
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for nxt in graph.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def test_the_walk_skips_type_checking_blocks_and_sees_function_imports(tmp_path):
    path = tmp_path / "sample.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
                    "else:\n    from .b import B\ndef f():\n    from .c import C\n",
                    encoding="utf-8")
    found = runtime_imports(path, "p")
    assert {"p.b", "p.c"} <= found and "p.a" not in found


def test_the_producing_modules_never_import_the_facade():
    graph = module_graph()
    facade = f"{PACKAGE}.client"
    assert f"{PACKAGE}.producer.producer" in graph[facade]
    for module in ("producer.producer", "producer.sender", "producer.transactions"):
        assert facade not in reachable(graph, f"{PACKAGE}.{module}"), module


def test_no_module_of_the_client_imports_itself_through_others():
    graph = module_graph()
    assert [m for m in sorted(graph) if m in reachable(graph, m)] == []
