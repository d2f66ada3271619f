"""fakeapi's packages import only downward, and no module imports itself back (issue 19).

The layers, bottom to top (docs/INTERNALS.md draws them)::

    machinery <- codec <- schema <- registry <- server <- controllers | host | http <- harness <- fakeapi, cli

The graph is read from the source with :mod:`ast`: every ``import`` and ``from ... import``
of every module counts, at module level, inside functions (lazy imports) and under
``if TYPE_CHECKING:`` alike, and so does the package ``__init__`` each import runs on the way.
A module may import a module of a lower layer or of its own package, never one of a higher
layer or of a sibling package of its layer; and following imports never leads back to where
it started. The checks are plain functions, tested here on small made-up graphs too, so a
broken rule fails loudly rather than passing an empty graph.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fakeapi"

#: The layer of each package directly under fakeapi/ (a higher number may import a lower one).
LAYERS: dict[str, int] = {
    "machinery": 0,
    "codec": 1,
    "schema": 2,
    "registry": 3,
    "server": 4,
    "controllers": 5,
    "host": 5,
    "http": 5,
    "harness": 6,
}
#: Modules of fakeapi/ itself (the package's public face, the command line, the build's own
#: description): the top layer.
TOP = 7


def module_name(path: Path, root: Path = ROOT) -> str:
    """``fakeapi/server/store.py`` -> ``fakeapi.server.store``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: Path = PACKAGE, root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p, root): p for p in sorted(package.rglob("*.py"))}


def imports_of(source: str, name: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """The fakeapi modules one module's source imports, with the package ``__init__`` files each
    import runs, but not the module's own enclosing packages (Python runs those before the module
    itself, whatever it imports: ``fakeapi.host.host`` importing ``fakeapi.host`` is no cycle)."""
    known = set(known)
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in import_statements(source):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod]
            targets += [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
        for t in targets:
            parts = t.split(".")
            found.update(".".join(parts[:i]) for i in range(2, len(parts) + 1) if ".".join(parts[:i]) in known)
            if t == parts[0] and t in known:
                found.add(t)  # (the root package itself, imported by name: only fakeapi's own modules may)
    parts = name.split(".")
    found.difference_update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return found


@cache
def import_statements(source: str) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every ``import`` and ``from ... import`` of a module's source, anywhere in it (parsed once per
    source: several checks read every module of the package)."""
    return tuple(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import | ast.ImportFrom))


def import_graph(package: Path = PACKAGE, root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the fakeapi modules it imports."""
    mods = modules(package, root)
    return {name: imports_of(p.read_text(encoding="utf-8"), name, p.name == "__init__.py", mods)
            for name, p in mods.items()}


def layer_of(module: str) -> tuple[int, str]:
    """(layer, package) of a fakeapi module; a package not in LAYERS is an error."""
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and parts[1] not in LAYERS):
        return TOP, ""
    if parts[1] not in LAYERS:
        raise KeyError(f"{module}: package fakeapi.{parts[1]} has no layer in tests/test_layering.py LAYERS")
    return LAYERS[parts[1]], parts[1]


def upward_imports(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Each import of a higher layer, or of a sibling package of the same layer."""
    bad = []
    for mod, deps in sorted(graph.items()):
        layer, pkg = layer_of(mod)
        for dep in sorted(deps):
            dep_layer, dep_pkg = layer_of(dep)
            if dep_layer > layer or (dep_layer == layer and dep_pkg != pkg):
                bad.append(f"{mod} (layer {layer}) imports {dep} (layer {dep_layer})")
    return bad


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected group of modules (Tarjan), as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


# ---------------------------------------------------------------------------- the real graph


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "fakeapi.server.apiserver" in graph
    assert "fakeapi.machinery.errors" in graph["fakeapi.server.apiserver"]
    assert sum(len(d) for d in graph.values()) > 200  # (a parser that finds nothing proves nothing)


def test_every_package_has_a_layer() -> None:
    for name in import_graph():
        layer_of(name)  # raises for a package missing from LAYERS


def test_imports_go_only_downward() -> None:
    assert upward_imports(import_graph()) == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_no_relative_imports_in_fakeapi() -> None:
    """Absolute imports only: the graph above, and /work-style rewrites of moved modules, rely on them."""
    bad = []
    for name, path in modules().items():
        for node in import_statements(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.ImportFrom) and node.level:
                bad.append(f"{name}:{node.lineno}")
    assert bad == []


def test_fakeapi_never_imports_reconcilers() -> None:
    bad = []
    for name, path in modules().items():
        for node in import_statements(path.read_text(encoding="utf-8")):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad += [f"{name} imports {n}" for n in names if n.split(".")[0] == "reconcilers"]
    assert bad == []


def test_each_package_says_what_it_holds_and_may_import() -> None:
    for pkg in LAYERS:
        doc = ast.get_docstring(ast.parse((PACKAGE / pkg / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert "May import" in doc, f"fakeapi/{pkg}/__init__.py: the docstring says what the package may import"


# ---------------------------------------------------------------------------- the checks themselves


def test_an_upward_import_is_reported() -> None:
    graph = {"fakeapi.machinery.errors": {"fakeapi.server.apiserver"}, "fakeapi.server.apiserver": set()}
    assert upward_imports(graph) == ["fakeapi.machinery.errors (layer 0) imports fakeapi.server.apiserver (layer 4)"]


def test_a_sibling_package_import_is_reported() -> None:
    graph = {"fakeapi.http.rest": {"fakeapi.host.client"}, "fakeapi.host.client": {"fakeapi.server.apiserver"}}
    assert upward_imports(graph) == ["fakeapi.http.rest (layer 5) imports fakeapi.host.client (layer 5)"]


def test_a_cycle_is_reported() -> None:
    graph = {"fakeapi.codec.a": {"fakeapi.codec.b"}, "fakeapi.codec.b": {"fakeapi.codec.c"},
             "fakeapi.codec.c": {"fakeapi.codec.a"}, "fakeapi.codec.d": {"fakeapi.codec.a"}}
    assert cycles(graph) == [["fakeapi.codec.a", "fakeapi.codec.b", "fakeapi.codec.c"]]


def test_lazy_and_type_checking_imports_count() -> None:
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from fakeapi.server.apiserver import APIServer\n"
              "def f():\n    from fakeapi.machinery import errors\n")
    known = {"fakeapi", "fakeapi.server", "fakeapi.server.apiserver", "fakeapi.machinery",
             "fakeapi.machinery.errors"}
    assert imports_of(source, "fakeapi.codec.x", False, known) == {
        "fakeapi.server", "fakeapi.server.apiserver", "fakeapi.machinery", "fakeapi.machinery.errors"}


def test_a_relative_import_resolves_against_its_package() -> None:
    known = {"fakeapi", "fakeapi.host", "fakeapi.host.builder", "fakeapi.machinery", "fakeapi.machinery.errors"}
    got = imports_of("from .builder import X\nfrom ..machinery import errors\n", "fakeapi.host.host", False, known)
    assert got == {"fakeapi.host.builder", "fakeapi.machinery", "fakeapi.machinery.errors"}  # (not its own package)
