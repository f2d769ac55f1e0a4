"""Every cross-reference to nstviz's code in its docstrings and in ``docs/*.md`` names something that exists.

Where references are read: the docstrings of ``nstviz/**/*.py`` (every string that is a statement
of its own: module, class and function docstrings, and the attribute docstrings under an
assignment) and the Markdown files ``docs/*.md`` outside fenced code blocks.

What counts as a reference (the rule):

1. **A dotted name starting with** ``nstviz.``, anywhere in the text (Sphinx roles such as
   ``:func:`~nstviz.report.facts.rank_breaks``` included), and not glued to what precedes it (a
   letter, digit, ``.``, ``-``, ``/`` or ``<``: so ``rank-0.nstviz.json`` is a file name, not one).
   It resolves when its longest prefix that is a module of ``nstviz/`` imports and every further
   part is an attribute of the one before it.
2. **A code span** (between double backquotes in a docstring, single ones in Markdown), after
   dropping a trailing call ``(...)`` and a trailing ``/``, that is one of:

   a. a **path**: it has a ``/`` or is a file name ``name.py``, has no spaces, and its last part has no dot, a ``*`` or such an
      extension; its first part is a top-level folder of the repository (``nstviz``, ``tests``,
      ``js``, ``benchmarks``, ``scripts``, ``docs``) or a module or subpackage of ``nstviz/``
      (``capture/session.py`` and ``api.py`` mean ``nstviz/capture/session.py`` and
      ``nstviz/api.py``). It resolves when a file or folder matches it (``*`` and ``**`` glob)
      or, without an extension, when it names a module (``passes/upgrade``);
   b. a **dotted name** ``module.attr`` whose module part names a module of ``nstviz/`` that is
      not a package, relative to ``nstviz/``, with dots or slashes (``passes/marks.CapturedCall``,
      ``_options.FLAGS``, ``api.run_plan()``): it resolves as in 1. (``report.counts`` is not one:
      ``report`` is a package, and in prose a variable holding a Report);
   c. a **dotted name** whose first part is a name exported by ``nstviz.report`` (``Break.id``,
      ``Report.counts``): it resolves as in 1, from that class.

A function or class named through a module that is not a package must be defined in that module
(its owner): a name another module imports resolves through it, but the pointer is stale. A
package (``nstviz.report``) may re-export. An attribute of a class resolves when ``getattr`` finds it, or it is a dataclass field, an
annotation, or assigned as ``self.<name>`` in the class's source. Anything else (a bare name,
``torch._dynamo.config``, a relative Sphinx role such as ``:class:`Compile```) is not checked.
Generated files (``nstviz/static/``, built by ``js/build.mjs`` and not committed) are not checked.
"""

from __future__ import annotations

import ast
import dataclasses
import glob
import importlib
import inspect
import pathlib
import re
from collections.abc import Iterator

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = REPO / "nstviz"
TOP_FOLDERS = ("nstviz", "tests", "js", "benchmarks", "scripts", "docs")
GENERATED = ("nstviz/static/",)
# Broken references in files another branch owns for now (where: text): fixed when it merges.
PENDING: dict[str, str] = {}
EXTENSIONS = (".py", ".js", ".mjs", ".json", ".md", ".txt", ".css", ".html", ".png", ".toml")

_NSTVIZ_NAME = re.compile(r"(?<![\w.\-/<])nstviz(?:\.[A-Za-z_]\w*)+")
_DOCSTRING_SPAN = re.compile(r"``([^`\n]+?)``")
_MARKDOWN_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:[./][A-Za-z_]\w*)*\.[A-Za-z_]\w*$")
_CALL = re.compile(r"\([^()]*\)$")


@dataclasses.dataclass(frozen=True)
class Reference:
    """One reference: where it was read, the text as written, and what it names."""

    where: str
    text: str
    kind: str  # "name" (a dotted name from nstviz) or "path" (relative to the repository)
    target: str


def _modules() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.add(".".join(parts))
    return found


MODULES = _modules()
PACKAGES = {".".join(p.relative_to(REPO).parent.parts) for p in PACKAGE.rglob("__init__.py")}
_FIRST_PARTS = {m.split(".")[1] for m in MODULES if "." in m}
_REPORT_NAMES = frozenset(importlib.import_module("nstviz.report").__all__)


def references_in(text: str, where: str, *, markdown: bool) -> Iterator[Reference]:
    """The references in ``text`` by the rule of the module docstring."""
    for m in _NSTVIZ_NAME.finditer(text):
        yield Reference(where, m.group(0), "name", m.group(0))
    for m in (_MARKDOWN_SPAN if markdown else _DOCSTRING_SPAN).finditer(text):
        span = _CALL.sub("", m.group(1).strip()).rstrip("/")
        if not span or " " in span or span.startswith("nstviz."):
            continue  # nstviz.x names are read by the first rule
        first = re.split(r"[./]", span, maxsplit=1)[0]
        last = span.rpartition("/")[2]
        is_path = ("/" in span or (span.endswith(".py") and span.count(".") == 1)) and (
            "." not in last or "*" in last or last.endswith(EXTENSIONS)
        )
        if is_path and first in (*TOP_FOLDERS, *_FIRST_PARTS) and re.fullmatch(r"[\w./*\-]+", span):
            path = span if first in TOP_FOLDERS else f"nstviz/{span}"
            yield Reference(where, m.group(1), "path", path)
        elif _DOTTED.match(span):
            module, _, attr = span.replace("/", ".").rpartition(".")
            if first in _FIRST_PARTS and f"nstviz.{module}" in MODULES - PACKAGES:
                yield Reference(where, m.group(1), "name", f"nstviz.{module}.{attr}")
            elif first in _REPORT_NAMES and "/" not in span:
                yield Reference(where, m.group(1), "name", f"nstviz.report.{span}")


def _docstrings(path: pathlib.Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value


def all_references() -> list[Reference]:
    """Every reference in nstviz's docstrings and in docs/*.md."""
    found: list[Reference] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in _docstrings(path):
            found += references_in(text, f"{path.relative_to(REPO)}:{line}", markdown=False)
    for path in sorted((REPO / "docs").glob("*.md")):
        text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text(encoding="utf-8"))
        for number, line in enumerate(text.splitlines(), start=1):
            found += references_in(line, f"{path.relative_to(REPO)}:{number}", markdown=True)
    return found


def _class_has(cls: type, name: str) -> bool:
    if dataclasses.is_dataclass(cls) and name in {f.name for f in dataclasses.fields(cls)}:
        return True
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            return True
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        if re.search(rf"\bself\.{re.escape(name)}\b\s*(?::[^=\n]+)?=", source):
            return True
    return False


def resolves(ref: Reference) -> bool:
    """Whether what ``ref`` names exists."""
    if ref.kind == "path":
        if "." not in ref.target.rpartition("/")[2] and (REPO / f"{ref.target}.py").is_file():
            return True  # a module written as a path (``passes/upgrade``)
        return bool(glob.glob(str(REPO / ref.target), recursive=True))
    parts = ref.target.split(".")
    end = max((i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES), default=0)
    if end == 0:
        return False
    module = ".".join(parts[:end])
    obj = importlib.import_module(module)
    for i, name in enumerate(parts[end:]):
        if hasattr(obj, name):
            obj = getattr(obj, name)
            if i == 0 and module not in PACKAGES and (inspect.isclass(obj) or inspect.isfunction(obj)):
                if obj.__module__ != module:
                    return False  # named through a module that only imports it
        elif inspect.isclass(obj) and _class_has(obj, name):
            return True  # an instance attribute: nothing further to follow
        else:
            return False
    return True


def broken(refs: list[Reference]) -> list[str]:
    return [
        f"{r.where}: {r.text!r} ({r.target})"
        for r in refs
        if not any(r.target.startswith(g) for g in GENERATED) and not resolves(r)
    ]


def _pending(ref: Reference) -> bool:
    return PENDING.get(ref.where.partition(":")[0]) == ref.text


def test_every_reference_in_docstrings_and_docs_resolves():
    refs = all_references()
    assert len(refs) > 300, "the rule reads next to nothing: is it still reading the docstrings?"
    assert broken([r for r in refs if not _pending(r)]) == []


def test_every_pending_reference_is_still_there_and_broken():
    pending = [r for r in all_references() if _pending(r)]
    assert len(broken(pending)) == len(PENDING), f"fixed: delete it from PENDING: {PENDING}"


@pytest.mark.parametrize(
    ("text", "markdown", "targets"),
    [
        ("see :func:`~nstviz.report.facts.rank_breaks`.", False, ["nstviz.report.facts.rank_breaks"]),
        ("written as rank-0.nstviz.json", False, []),
        ("``capture/session.py``, ``api.py``, ``api.run_plan()``", False,
         ["nstviz/capture/session.py", "nstviz/api.py", "nstviz.api.run_plan"]),
        ("`passes/marks.CapturedCall`, `Break.id`, `torch._dynamo.config`, `tests/fixtures/*.report.json`", True,
         ["nstviz.passes.marks.CapturedCall", "nstviz.report.Break.id", "tests/fixtures/*.report.json"]),
        ("``a b``, ``x.y``, ``report.counts``, ``report.schema.json``, ``site-packages/torch/``", False, []),
    ],
)
def test_the_rule_reads_these_references(text, markdown, targets):
    assert [r.target for r in references_in(text, "here", markdown=markdown)] == targets


def test_a_broken_reference_fails():
    text = (
        ":func:`nstviz.report.facts.no_such_function`, ``capture/no_such_module.py``, "
        "``passes/marks.NoSuchClass``, ``Report.no_such_field``, :attr:`nstviz.report.Break.id`"
    )
    refs = list(references_in(text, "here", markdown=False))
    assert broken(refs) == [
        "here: 'nstviz.report.facts.no_such_function' (nstviz.report.facts.no_such_function)",
        "here: 'capture/no_such_module.py' (nstviz/capture/no_such_module.py)",
        "here: 'passes/marks.NoSuchClass' (nstviz.passes.marks.NoSuchClass)",
        "here: 'Report.no_such_field' (nstviz.report.Report.no_such_field)",
    ]


def test_the_package_layout_lists_each_module_once():
    """docs/architecture.md's "Package layout" table: no module in two rows."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Package layout", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    listed = [span for row in rows for span in _MARKDOWN_SPAN.findall(row)]
    assert len(listed) > 50
    assert sorted({p for p in listed if listed.count(p) > 1}) == []
