"""Code metrics of ``nstviz/``: long functions, long parameter lists, import cycles, lazy imports,
repeated code.

Usage::

    python benchmarks/code_metrics.py [--root nstviz]

Prints five sections, each headed by its count, then the list (sorted, so two outputs diff):

1. **Functions over 60 lines**: every ``def``/``async def`` (methods and nested functions too),
   measured from the ``def`` line to its last line (decorators not counted), as
   ``module:qualified.name (N lines)``.
2. **Functions over 8 parameters**: the named parameters (positional-only, positional,
   keyword-only; ``*args`` and ``**kwargs`` count one each); ``self``/``cls`` as the first
   parameter of a function defined in a class body do not count.
3. **Import cycles, lazy imports counted**: the import graph is the one
   ``tests/unit/test_layers.py`` reads with ``ast`` (its ``import_graph``: imports at module
   level and inside functions, ``importlib.import_module`` with a literal name; not those under
   ``if TYPE_CHECKING:``; a parent package an import runs is not an edge). Unlike that test, the
   lazy delegations its ``LAZY_EXCEPTIONS`` sanctions count here. Each strongly connected group of
   modules is one cycle, printed with one shortest way round it.
4. **Lazy imports of nstviz modules**: imports inside a function whose target is a module of the
   package, as ``module:line -> target (inside function)``.
5. **Repeated code**: pairs of places with six or more consecutive alike lines. Each line is
   normalised (leading and trailing whitespace stripped); blank lines, comment-only lines,
   import lines and lines of brackets and punctuation only (``)``, ``],``, a lone triple quote) are dropped.
   Every window of six consecutive normalised lines is hashed; two places whose windows have the
   same hash (in two files, or in one file without overlapping) are alike, and runs of alike
   windows that follow each other in both places are merged into one pair, printed as
   ``a.py:L1-L2 == b.py:L3-L4 (N lines)`` with N the normalised lines the pair shares.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import pathlib
import re
import sys
from collections import defaultdict

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.unit.test_layers import find_cycles, import_graph, module_names  # noqa: E402

LONG_FUNCTION = 60
MANY_PARAMETERS = 8
WINDOW = 6

_PUNCTUATION_ONLY = re.compile(r"""^[\s()\[\]{},:;.'"]*$""")


def _functions(tree: ast.Module):
    """(qualified name, node, defined in a class body) of every function, outermost first."""

    def walk(node: ast.AST, prefix: str, in_class: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child, in_class
                yield from walk(child, f"{name}.", False)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.", True)
            else:
                yield from walk(child, prefix, in_class)

    yield from walk(tree, "", False)


def _parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> int:
    args = node.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if in_class and not is_static and named and named[0].arg in ("self", "cls"):
        named = named[1:]
    return len(named) + (args.vararg is not None) + (args.kwarg is not None)


def function_metrics(modules: dict[str, pathlib.Path]) -> tuple[list[str], list[str]]:
    """The functions over ``LONG_FUNCTION`` lines and those over ``MANY_PARAMETERS`` parameters."""
    long, many = [], []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node, in_class in _functions(tree):
            lines = node.end_lineno - node.lineno + 1
            if lines > LONG_FUNCTION:
                long.append(f"{module}:{name} ({lines} lines)")
            count = _parameter_count(node, in_class)
            if count > MANY_PARAMETERS:
                many.append(f"{module}:{name} ({count} parameters)")
    return sorted(long), sorted(many)


def import_metrics(root: pathlib.Path, package: str) -> tuple[list[str], list[str]]:
    """The import cycles (lazy imports counted) and the lazy imports of the package's modules."""
    graph = import_graph(root, package)
    cycles = []
    for group, path in find_cycles(graph):
        way = " -> ".join([path[0].importer, *(imp.target for imp in path)])
        edges = "; ".join(imp.where() for imp in path)
        cycles.append(f"{len(group)} modules: {', '.join(group)}\n    one way round: {way}\n    edges: {edges}")
    lazy = sorted(
        imp.where() for imps in graph.values() for imp in imps if imp.functions and imp.target in graph
    )
    return sorted(cycles), lazy


def _normalised(path: pathlib.Path) -> list[tuple[int, str]]:
    kept = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#") or _PUNCTUATION_ONLY.match(line):
            continue
        if line.startswith(("import ", "from ")) and " import " in f" {line}":
            continue
        kept.append((number, line))
    return kept


def repeated_code(root: pathlib.Path) -> list[str]:
    """Pairs of places with ``WINDOW`` or more consecutive alike normalised lines (module docstring)."""
    files = {path.relative_to(root.parent).as_posix(): _normalised(path) for path in sorted(root.rglob("*.py"))}
    seen: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for name, lines in files.items():
        for start in range(len(lines) - WINDOW + 1):
            text = "\n".join(line for _, line in lines[start : start + WINDOW])
            seen[hashlib.sha1(text.encode()).hexdigest()].append((name, start))
    alike: set[tuple[str, int, str, int]] = set()
    for places in seen.values():
        for i, (a, ia) in enumerate(places):
            for b, ib in places[i + 1 :]:
                if a == b and abs(ia - ib) < WINDOW:
                    continue  # one place overlapping itself
                alike.add((a, ia, b, ib) if (a, ia) <= (b, ib) else (b, ib, a, ia))
    pairs = []
    for a, ia, b, ib in sorted(alike):
        if (a, ia - 1, b, ib - 1) in alike:
            continue  # inside a run that started earlier
        n = 0
        while (a, ia + n, b, ib + n) in alike:
            n += 1
        shared = n + WINDOW - 1
        la, lb = files[a], files[b]
        pairs.append(
            f"{a}:{la[ia][0]}-{la[ia + shared - 1][0]} == {b}:{lb[ib][0]}-{lb[ib + shared - 1][0]} ({shared} lines)"
        )
    return pairs


def _section(title: str, items: list[str]) -> str:
    body = "".join(f"\n  {item}" for item in items)
    return f"{title}: {len(items)}{body}\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=REPO / "nstviz", help="the package folder")
    root = parser.parse_args(argv).root.resolve()
    modules = module_names(root, root.name)
    long, many = function_metrics(modules)
    cycles, lazy = import_metrics(root, root.name)
    print(f"code metrics of {root.name}/ ({len(modules)} modules)\n")
    print(_section(f"functions over {LONG_FUNCTION} lines", long))
    print(_section(f"functions over {MANY_PARAMETERS} parameters", many))
    print(_section("import cycles (lazy imports counted)", cycles))
    print(_section(f"lazy imports of {root.name} modules", lazy))
    print(_section(f"repeated code ({WINDOW}+ alike lines)", repeated_code(root)))


if __name__ == "__main__":
    main()
