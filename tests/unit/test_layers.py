"""The layers of ``nstviz/``, kept by reading its import graph from the code with ``ast``.

Read the rules here: ``LAYERS`` says which layer every module belongs to and what it may import,
``LAZY_EXCEPTIONS`` the few imports allowed across a layer inside a named function,
``TORCH_ALLOWED`` who may import torch, ``MAX_LINES`` the size of a module. docs/architecture.md
draws the same layers.

What counts as an import: every ``import``/``from ... import`` anywhere in a module, at module
level or inside a function (lazy), and ``importlib.import_module("x")``/``__import__("x")`` with a
literal name; imports under ``if TYPE_CHECKING:`` do not count (they never run), except for the
cycles and the layer table, which hold for them too (a type a lower layer names from a higher one
is a dependency all the same: the capture's Trials named the Session that builds it).
``from nstviz.x import y`` is an edge to ``nstviz.x.y`` when ``y`` is a submodule, else to
``nstviz.x``. The parent packages an import also runs (``nstviz/__init__.py``) are not edges.
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "nstviz"

MAX_LINES = 600

LEAVES = (
    "nstviz.errors",
    "nstviz._where",
    "nstviz._gb_ids",
    "nstviz._version",
    "nstviz._text",  # short text forms (first line, one-line shorten), imports nothing
    "nstviz._options",
    "nstviz._progress",  # the progress event read by every front end (torch-free, imports nothing)
)
BELOW_CAPTURE = ("passes", "tracing", "report", "leaves")


@dataclasses.dataclass(frozen=True)
class Layer:
    """One layer: the modules in it (``fnmatch`` patterns, first layer that matches wins)
    and what they may import (layer names, or module patterns; ``"*"``: anything)."""

    name: str
    members: tuple[str, ...]
    may_import: tuple[str, ...]


LAYERS: tuple[Layer, ...] = (
    # shared leaves, imported by every layer; they import only each other
    Layer("leaves", LEAVES, ("leaves",)),
    # the model: frozen dataclasses, codec, lint, facts; it imports only the errors
    Layer("report", ("nstviz.report", "nstviz.report.*"), ("report", "nstviz.errors")),
    # torch-free text -> model, shared by capture and offline
    Layer("tracing", ("nstviz.tracing", "nstviz.tracing.*"), ("tracing", "report", "leaves")),
    # pure passes over the model
    Layer("passes", ("nstviz.passes", "nstviz.passes.*"), ("passes", "tracing", "report", "leaves")),
    # live capture: anything below it
    Layer("capture", ("nstviz.capture", "nstviz.capture.*"), ("capture", *BELOW_CAPTURE)),
    # the advisor: live, above capture
    Layer("advisor", ("nstviz.advisor", "nstviz.advisor.*"), ("advisor", "capture", *BELOW_CAPTURE)),
    # offline/record.py makes one live run, so it may use capture; the rest of offline is torch-free
    Layer("offline.record", ("nstviz.offline.record",), ("offline", "capture", *BELOW_CAPTURE)),
    Layer("offline", ("nstviz.offline", "nstviz.offline.*"), ("offline", *BELOW_CAPTURE)),
    # renderers read the Report only
    Layer("render", ("nstviz.render", "nstviz.render.*"), ("render", "report", "leaves")),
    # the JSON Schema is generated from the model
    Layer("schema", ("nstviz.schema", "nstviz.schema.*"), ("schema", "report", "leaves")),
    # compare / trace_code: options -> capture -> advisor -> passes
    Layer("api", ("nstviz.api",), ("capture", "advisor", "passes", "report", "leaves")),
    # front ends and the public package: anything
    Layer("jupyter", ("nstviz.jupyter", "nstviz.jupyter.*"), ("*",)),
    Layer("cli", ("nstviz.cli", "nstviz.cli.*", "nstviz.__main__"), ("*",)),
    Layer("public", ("nstviz",), ("*",)),
    # the built-in examples are user code
    Layer("examples", ("nstviz.examples", "nstviz.examples.*"), ("*",)),
)

# (importer, imported, functions): allowed only inside a function of one of these names (lazy).
LAZY_EXCEPTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # Report.save_html() / Report.summary(): convenience methods delegating to a renderer
    ("nstviz.report*", "nstviz.render.*", ("save_html", "summary")),
    # reading a schema-1 Report (old files only) computes its counts and headline with the passes
    ("nstviz.report._codec", "nstviz.passes.upgrade", ("_from_v1",)),
)

TORCH_ALLOWED = (
    "nstviz.capture",
    "nstviz.capture.*",
    "nstviz.advisor",
    "nstviz.advisor.*",
    "nstviz.offline.record",
    "nstviz.examples",
    "nstviz.examples.*",
)


@dataclasses.dataclass(frozen=True)
class Import:
    importer: str
    target: str  # a module of the package, or the external name as written
    line: int
    functions: tuple[str, ...]  # enclosing functions, outermost first; () at module level

    def where(self) -> str:
        lazy = f" (inside {'.'.join(self.functions)})" if self.functions else ""
        return f"{self.importer}:{self.line} -> {self.target}{lazy}"


def module_names(root: pathlib.Path, package: str) -> dict[str, pathlib.Path]:
    """Every module of the package at ``root`` (a folder named ``package``), by dotted name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([package, *parts])] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, modules: set[str], type_checking: bool = False) -> None:
        self.module, self.modules, self.type_checking = module, modules, type_checking
        self.package = module if is_package else module.rpartition(".")[0]
        self.functions: list[str] = []
        self.found: list[Import] = []

    def _resolve(self, name: str) -> str:
        """The longest prefix of ``name`` that is a module of the package, else ``name``."""
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in self.modules:
                return ".".join(parts[:end])
        return name

    def _add(self, target: str, line: int) -> None:
        imp = Import(self.module, self._resolve(target), line, tuple(self.functions))
        if imp not in self.found:  # `from x import a, b` of one module is one edge
            self.found.append(imp)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test) and not self.type_checking:
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            anchor = self.package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, *([base] if base else [])])
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self._add(sub if alias.name != "*" and sub in self.modules else base, node.lineno)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in ("import_module", "__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._add(first.value, node.lineno)
        self.generic_visit(node)


def import_graph(root: pathlib.Path, package: str, *, type_checking: bool = False) -> dict[str, list[Import]]:
    """Every module's imports (internal targets resolved to modules of the package).

    ``type_checking``: the imports under ``if TYPE_CHECKING:`` count too.
    """
    modules = module_names(root, package)
    graph = {}
    for name, path in modules.items():
        collector = _Collector(name, path.name == "__init__.py", set(modules), type_checking)
        collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        graph[name] = collector.found
    return graph


def _internal(graph: dict[str, list[Import]]) -> dict[str, list[Import]]:
    return {m: [i for i in imps if i.target in graph and i.target != m] for m, imps in graph.items()}


def find_cycles(graph: dict[str, list[Import]]) -> list[tuple[list[str], list[Import]]]:
    """Each strongly connected group of modules (Tarjan), sorted, with one cycle through it as edges."""
    edges = _internal(graph)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(v: str) -> None:  # recursion depth is bounded by the package's module count
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for imp in edges[v]:
            w = imp.target
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(edges):
        if v not in index:
            connect(v)
    cycles = []
    for group in groups:
        start = min(group)
        # shortest way back to start inside the group (breadth first)
        came: dict[str, Import | None] = {start: None}
        frontier, back = [start], None
        while frontier and back is None:
            nxt = []
            for v in frontier:
                for imp in edges[v]:
                    if imp.target == start:
                        back = imp
                        break
                    if imp.target in group and imp.target not in came:
                        came[imp.target] = imp
                        nxt.append(imp.target)
                if back is not None:
                    break
            frontier = nxt
        path = [back]
        while (prev := came[path[-1].importer]) is not None:
            path.append(prev)
        cycles.append((sorted(group), list(reversed(path))))
    return cycles


def layer_of(module: str, layers: tuple[Layer, ...] = LAYERS) -> Layer | None:
    return next((layer for layer in layers if any(fnmatch.fnmatchcase(module, p) for p in layer.members)), None)


def allowed(imp: Import, layers=LAYERS, exceptions=LAZY_EXCEPTIONS) -> bool:
    source, target = layer_of(imp.importer, layers), layer_of(imp.target, layers)
    if source is None or target is None:
        return False
    for entry in source.may_import:
        if entry == "*" or entry == target.name or fnmatch.fnmatchcase(imp.target, entry):
            return True
    return any(
        fnmatch.fnmatchcase(imp.importer, importer)
        and fnmatch.fnmatchcase(imp.target, imported)
        and set(imp.functions) & set(functions)
        for importer, imported, functions in exceptions
    )


def forbidden_imports(graph: dict[str, list[Import]], layers=LAYERS, exceptions=LAZY_EXCEPTIONS) -> list[str]:
    found = []
    for imps in _internal(graph).values():
        for imp in imps:
            if not allowed(imp, layers, exceptions):
                source, target = layer_of(imp.importer, layers), layer_of(imp.target, layers)
                found.append(f"{imp.where()}  [{getattr(source, 'name', '?')} may not import {getattr(target, 'name', '?')}]")
    return found


def torch_imports(graph: dict[str, list[Import]], allowed_modules=TORCH_ALLOWED) -> list[str]:
    return [
        imp.where()
        for module, imps in graph.items()
        if not any(fnmatch.fnmatchcase(module, p) for p in allowed_modules)
        for imp in imps
        if imp.target == "torch" or imp.target.startswith("torch.")
    ]


def _cycle_text(group: list[str], cycle: list[Import]) -> str:
    modules = [cycle[0].importer, *(imp.target for imp in cycle)]
    edges = "\n    ".join(imp.where() for imp in cycle)
    return f"{len(group)} modules in a cycle: {', '.join(group)}\n  for one: {' -> '.join(modules)}\n    {edges}"


@pytest.fixture(scope="module")
def graph() -> dict[str, list[Import]]:
    return import_graph(PACKAGE, "nstviz")


def test_every_module_has_a_layer(graph):
    homeless = [m for m in graph if layer_of(m) is None]
    assert homeless == [], f"modules in no layer (add them to LAYERS in {__name__}): {homeless}"


def _without_sanctioned(graph: dict[str, list[Import]], exceptions=LAZY_EXCEPTIONS) -> dict[str, list[Import]]:
    """The graph without the lazy delegations ``LAZY_EXCEPTIONS`` sanctions: such an edge points up
    from a lower layer on purpose (``Report.save_html`` -> a renderer), so it would close a cycle with
    every import the other way; any other lazy import still counts."""

    def sanctioned(imp: Import) -> bool:
        return any(
            fnmatch.fnmatchcase(imp.importer, importer)
            and fnmatch.fnmatchcase(imp.target, imported)
            and set(imp.functions) & set(functions)
            for importer, imported, functions in exceptions
        )

    return {m: [i for i in imps if not sanctioned(i)] for m, imps in graph.items()}


def test_no_import_cycle(graph):
    cycles = [_cycle_text(*c) for c in find_cycles(_without_sanctioned(graph))]
    assert cycles == [], "import cycles (lazy imports count):\n" + "\n".join(cycles)


def test_no_import_cycle_nor_forbidden_import_through_type_annotations():
    typed = import_graph(PACKAGE, "nstviz", type_checking=True)
    cycles = [_cycle_text(*c) for c in find_cycles(_without_sanctioned(typed))]
    assert cycles == [], "import cycles (TYPE_CHECKING imports count):\n" + "\n".join(cycles)
    found = forbidden_imports(typed)
    assert found == [], "TYPE_CHECKING imports the layer table forbids:\n" + "\n".join(found)


def test_no_module_over_max_lines():
    long = {
        name: n
        for name, path in module_names(PACKAGE, "nstviz").items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


def test_torch_only_in_live_layers(graph):
    found = torch_imports(graph)
    assert found == [], f"torch imported outside {TORCH_ALLOWED}:\n" + "\n".join(found)


def test_imports_follow_the_layer_table(graph):
    found = forbidden_imports(graph)
    assert found == [], "imports the layer table forbids:\n" + "\n".join(found)


def test_the_checker_finds_a_cycle_and_a_forbidden_import(tmp_path):
    toy = tmp_path / "toy"
    toy.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "def f():\n    from toy import b\n    return b\n",  # lazy, resolves the submodule
        "b.py": "from toy.a import f\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy import a\nimport torch.nn\n",
        "low.py": "def g():\n    from . import c\n    return c\n",
        "pkg/__init__.py": "",
        "pkg/deep.py": "import importlib\nimportlib.import_module('toy.low')\nfrom .. import a\n",
    }
    for name, text in files.items():
        (toy / name).parent.mkdir(exist_ok=True)
        (toy / name).write_text(text)
    graph = import_graph(toy, "toy")
    assert [i.target for i in graph["toy.c"]] == ["typing", "torch.nn"]  # the TYPE_CHECKING import is not an edge
    typed = import_graph(toy, "toy", type_checking=True)
    assert [i.target for i in typed["toy.c"]] == ["typing", "toy.a", "torch.nn"]  # unless asked for
    assert [i.target for i in graph["toy.pkg.deep"]] == ["importlib", "toy.low", "toy.a"]

    cycles = find_cycles(graph)
    assert [(g, [(i.importer, i.target, i.functions) for i in c]) for g, c in cycles] == [
        (["toy.a", "toy.b"], [("toy.a", "toy.b", ("f",)), ("toy.b", "toy.a", ())])
    ]
    assert "toy.a -> toy.b -> toy.a" in _cycle_text(*cycles[0])

    layers = (Layer("low", ("toy.low",), ("low",)), Layer("rest", ("toy", "toy.*"), ("*",)))
    assert forbidden_imports(graph, layers, ()) == ["toy.low:2 -> toy.c (inside g)  [low may not import rest]"]
    assert forbidden_imports(graph, layers, (("toy.low", "toy.c", ("g",)),)) == []
    assert torch_imports(graph, ("toy.a",)) == ["toy.c:4 -> torch.nn"]
    assert torch_imports(graph, ("toy.c",)) == []
