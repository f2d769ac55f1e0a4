"""Names live under one name, in one module, and are imported from it (read from the code with ``ast``).

- No alias: a module-level ``X = Y`` whose ``Y`` is a bare name nstviz defines (imported from an
  nstviz module, or a function, class or constant of the same module) keeps one thing under two
  names; use the name it has.
- Imported from the owner: ``from nstviz.m import x`` inside ``nstviz/``, where ``nstviz.m`` is a
  module (not a package: a package's ``__init__.py`` may re-export its modules' names) that does
  not itself define ``x``, goes through a module that only imports it; import it from where it is
  defined. ``OWNED_ELSEWHERE`` lists the re-exports kept for now, each with its reason.
"""

from __future__ import annotations

import ast
import fnmatch
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = REPO / "nstviz"

# (importer pattern, module pattern): re-exports still used, and why.
OWNED_ELSEWHERE = (
    # Location, Compile and GuardFailure live in report/location.py and report/compiles.py;
    # report/model.py re-exports them on purpose (docs/architecture.md, the package layout)
    ("nstviz.*", "nstviz.report.model"),
    # capture/convert.py's re-exports of tracing/breaks: branch breaks changes that module
    ("nstviz.*", "nstviz.capture.convert"),
    ("nstviz.capture.convert", "nstviz.*"),
)


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _top_level(body: list[ast.stmt]):
    """Module-level statements, also inside ``if``/``try``/``with`` blocks (not in functions or classes)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _top_level([n for n in inner if isinstance(n, ast.stmt)] + [
                    s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body
                ])


def _tree(module: str) -> ast.Module:
    path = MODULES[module]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def defined_names(module: str) -> set[str]:
    """What ``module`` defines itself at module level (functions, classes, assignments)."""
    found: set[str] = set()
    for node in _top_level(_tree(module).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    return found


def _nstviz_imports(module: str) -> dict[str, str]:
    """Names bound by ``from nstviz... import`` at module level -> the module they come from."""
    bound = {}
    for node in _top_level(_tree(module).body):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nstviz") and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = node.module
    return bound


def aliases() -> list[str]:
    found = []
    for module in MODULES:
        own = defined_names(module) | set(_nstviz_imports(module))
        for node in _top_level(_tree(module).body):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Name)
                and node.value.id in own
            ):
                found.append(f"{module}:{node.lineno} {node.targets[0].id} = {node.value.id}")
    return found


def imports_not_from_the_owner() -> list[str]:
    found = []
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    for importer in MODULES:
        for node in ast.walk(_tree(importer)):
            if not (isinstance(node, ast.ImportFrom) and node.module in MODULES and node.module not in packages):
                continue
            if any(fnmatch.fnmatchcase(importer, i) and fnmatch.fnmatchcase(node.module, m) for i, m in OWNED_ELSEWHERE):
                continue
            defined = defined_names(node.module)
            for alias in node.names:
                if alias.name not in defined and f"{node.module}.{alias.name}" not in MODULES:
                    found.append(f"{importer}:{node.lineno} imports {alias.name} from {node.module}, which only imports it")
    return found


def test_no_name_is_kept_under_a_second_name():
    assert aliases() == []


def test_names_are_imported_from_the_module_that_defines_them():
    assert imports_not_from_the_owner() == []
