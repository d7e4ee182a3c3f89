"""The layers of the code, written down in order, and checked (README, "Layout").

:data:`LAYERS` lists them lowest first. A module may import modules of its own layer and of the
layers below it, never of a layer above: the record formats know nothing of the wire protocol,
the log nothing of ZooKeeper, the client nothing of the broker, broker_lite nothing of Spark.
Every module of both packages belongs to exactly one layer, so a new folder must be placed
before it can be used. Nor may modules import each other in a circle, at any depth, in either
package. The imports are read from the source with ast, every one of them: inside functions, and
under ``if TYPE_CHECKING:`` too (an annotation that needs a module above is a dependency on it
all the same). The broker's tests stay below Spark as well: none of them imports kspark.
"""

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The layers, lowest first: each a name and the packages or modules in it. A module is in the
#: layer of the longest of these names that it is, or is inside.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("common", ("broker_lite.common",)),
    ("records", ("broker_lite.records",)),
    # schemas as data, sans I/O: the registry's schema types (parsing, canonical forms) and the
    # payload codecs over them (Confluent's framing; Avro, Protobuf and JSON to Arrow and back)
    ("schemas", ("broker_lite.registry.errors", "broker_lite.registry.schemas",
                 "broker_lite.serde")),
    ("protocol", ("broker_lite.protocol",)),
    ("security", ("broker_lite.security",)),
    ("config", ("broker_lite.config",)),
    ("log", ("broker_lite.log",)),
    ("zk", ("broker_lite.zk",)),
    ("client", ("broker_lite.client",)),
    ("controller", ("broker_lite.controller",)),
    ("replication", ("broker_lite.replication",)),
    ("coordinator", ("broker_lite.coordinator",)),
    # consumer groups (KIP-848): above the classic groups and transactions they extend
    ("coordinator consumer groups", ("broker_lite.coordinator.consumer",)),
    # the schema registry: a service of its own over the client, which a broker may run
    ("registry", ("broker_lite.registry",)),
    ("server", ("broker_lite.server",)),
    ("tools", ("broker_lite.tools",)),
    ("local", ("broker_lite.local",)),
    ("command", ("broker_lite", "broker_lite.cli", "broker_lite.__main__")),
    # the Spark connector, above all of broker_lite
    ("kspark base", ("kspark._aliases", "kspark.client", "kspark.arrow", "kspark.spark_ddl",
                     "kspark.options", "kspark._build")),
    # structured keys and values: options, planning, decoding and encoding, for both sides
    ("kspark structured", ("kspark.structured",)),
    ("kspark source and sink", ("kspark.source", "kspark.sink")),
    ("kspark data source", ("kspark.datasource", "kspark._discovery")),
    ("kspark session", ("kspark", "kspark.session", "kspark.functions")),
    ("kspark tools", ("kspark.testing", "kspark.demo", "kspark.bench", "kspark.cli")),
]


def modules(top: str) -> dict[str, Path]:
    """Module name -> file, for every module of the package ``top``."""
    found = {}
    for path in sorted((ROOT / top).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


KNOWN = {**modules("broker_lite"), **modules("kspark")}


def imported_names(path: Path, package: str) -> Iterable[tuple[str, tuple[str, ...]]]:
    """``(module, names)`` for every import statement of the file, the module made absolute
    (``package`` is the file's own package) and ``names`` what ``from module import ...``
    takes (empty for ``import module``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = package.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, tuple(alias.name for alias in node.names)


def resolve(name: str, known: Iterable[str]) -> str | None:
    """The module of ``known`` that an import of ``name`` runs: ``name`` itself, or the nearest
    package or module above it (``from a.b import name`` of a class gives ``a.b``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def dependencies(module: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports; ``from package import submodule``
    depends on the submodule, not on the package's ``__init__``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for imported, names in imported_names(path, package):
        targets = [f"{imported}.{n}" if f"{imported}.{n}" in known else imported
                   for n in names] or [imported]
        for target in targets:
            resolved = resolve(target, known)
            if resolved is not None and resolved != module:
                found.add(resolved)
    return found


def import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    return {module: dependencies(module, path, known) for module, path in known.items()}


def layer_of(module: str, layers=LAYERS) -> int | None:
    """The index of ``module``'s layer, or None when no layer names it."""
    best, best_length = None, -1
    for index, (_, names) in enumerate(layers):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best_length:
                best, best_length = index, len(name)
    return best


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Every import of a module from a layer above its own, as ``a (layer) imports b (layer)``."""
    found = []
    for module, imported in sorted(graph.items()):
        own = layer_of(module, layers)
        for target in sorted(imported):
            theirs = layer_of(target, layers)
            if own is not None and theirs is not None and theirs > own:
                found.append(f"{module} ({layers[own][0]}) imports {target} "
                             f"({layers[theirs][0]})")
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules that import each other in a circle: each group of two or more that can all
    reach each other (the strongly connected components, by Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []

    def visit(node: str) -> None:
        # iterative, so that a long chain of imports cannot exhaust Python's recursion limit
        work = [(node, iter(sorted(graph.get(node, ()))))]
        index[node] = lowest[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        while work:
            current, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = lowest[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    lowest[current] = min(lowest[current], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    lowest[parent] = min(lowest[parent], lowest[current])
                if lowest[current] == index[current]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == current:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


# -- the checks ----------------------------------------------------------------------------------

def test_every_module_is_in_a_layer():
    assert [m for m in sorted(KNOWN) if layer_of(m) is None] == []


def test_no_module_imports_from_a_layer_above_its_own():
    graph = import_graph(KNOWN)
    assert sum(map(len, graph.values())) > 1000, "few imports found: the walk is broken"
    assert upward_imports(graph) == []


#: The coordinator's parts, in their one-way order: each imports only parts of a lower rank
#: (transaction and share side by side, neither importing the other).
COORDINATOR_PARTS = {"common": 0, "group": 1, "transaction": 2, "share": 2}


def test_the_coordinators_parts_import_one_way():
    graph = import_graph(KNOWN)
    prefix = "broker_lite.coordinator."

    def part(module: str) -> str | None:
        name = module.removeprefix(prefix).split(".")[0] if module.startswith(prefix) else None
        return name if name in COORDINATOR_PARTS else None

    wrong = sorted(f"{module} imports {imported}" for module, imports in graph.items()
                   for imported in imports
                   if part(module) and part(imported) and part(module) != part(imported)
                   and COORDINATOR_PARTS[part(imported)] >= COORDINATOR_PARTS[part(module)])
    assert not wrong, "\n".join(wrong)
    assert {part(m) for m in KNOWN if part(m)} == set(COORDINATOR_PARTS)


def test_no_modules_import_each_other_in_a_circle():
    assert circles(import_graph(KNOWN)) == []


def test_the_broker_tests_never_import_kspark():
    offenders = []
    for path in sorted((ROOT / "tests" / "broker_lite").rglob("*.py")):
        for imported, _ in imported_names(path, "tests"):
            if imported == "kspark" or imported.startswith("kspark."):
                offenders.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert offenders == []


# -- the checks' own machinery, on small made-up trees ------------------------------------------

def write_tree(root: Path, files: dict[str, str]) -> dict[str, Path]:
    """Write ``files`` (path -> source) under ``root``; their module -> path map."""
    found = {}
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        parts = list(Path(name).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


TREE = {
    "p/__init__.py": "",
    "p/low/__init__.py": "from .a import A\n",
    "p/low/a.py": "A = 1\n",
    "p/high/__init__.py": "",
    "p/high/b.py": "from p.low import A\nfrom ..low import a\n",
}


def test_relative_and_absolute_imports_resolve_to_modules(tmp_path):
    known = write_tree(tmp_path, TREE)
    graph = import_graph(known)
    assert graph["p.high.b"] == {"p.low", "p.low.a"}
    assert graph["p.low"] == {"p.low.a"}


@pytest.mark.parametrize(("planted", "expected"), [
    # an upward import at run time, and one made only for an annotation
    ("from p.high import b\n", "p.low.a (low) imports p.high.b (high)"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.high.b import B\n",
     "p.low.a (low) imports p.high.b (high)"),
    ("def late():\n    from ..high import b\n", "p.low.a (low) imports p.high.b (high)"),
])
def test_an_upward_import_is_found_wherever_it_stands(tmp_path, planted, expected):
    known = write_tree(tmp_path, {**TREE, "p/low/a.py": "A = 1\n" + planted})
    layers = [("low", ("p.low",)), ("high", ("p.high", "p"))]
    assert upward_imports(import_graph(known), layers) == [expected]


def test_a_circle_is_found_however_long_and_only_circles(tmp_path):
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    chain = {f"m{i}": {f"m{i + 1}"} for i in range(5000)}
    chain["m5000"] = {"m0"}
    assert [len(group) for group in circles(chain)] == [5001]
    known = write_tree(tmp_path, {**TREE, "p/low/a.py": "from typing import TYPE_CHECKING\n"
                                  "if TYPE_CHECKING:\n    from p.low import c\nA = 1\n",
                                  "p/low/c.py": "from .a import A\n"})
    assert circles(import_graph(known)) == [["p.low.a", "p.low.c"]]


def test_a_module_in_no_layer_is_found():
    assert layer_of("broker_lite.log.segment") == [name for name, _ in LAYERS].index("log")
    assert layer_of("broker_lite.logger") == layer_of("broker_lite")  # no prefix by letters
    assert layer_of("elsewhere.module") is None
