"""Remedy: a module built inside the compiled code on every call is built once (``build-once``).

Losses often build their helper modules on each call: transformers' ``ForObjectDetectionLoss``
makes a ``HungarianMatcher`` and an ``ImageLoss`` every time (DETR, YOLOS and their copies).
Dynamo cannot construct such a module in compiled code: ``nn.Module.__setattr__`` reaches a
bound method of the new object (GB0116 "Unexpected type in sourceless builder", GB0119
"Uninitialized nn.Module"), and a mark of the constructor only moves the break to the next call
of the new module. The rewrite builds each module outside the graph, once per distinct
arguments: ``m = Cls(a, b=c)`` becomes ``_nstviz_k = _nstviz_build_key(Cls, a, b=c)`` then
``m = _nstviz_built[_nstviz_k][0]``. ``_nstviz_build_key`` is an
``assume_constant_result`` function: Dynamo calls it while tracing (it builds the module, or
finds it built) and keeps its key as a constant; the module is then an existing object the graph
reads. Numbers, strings, devices and containers of them key by value, other objects by identity
(Dynamo guards on them); a tensor argument, or a module that has parameters (a fresh random
initialisation on every call), raises instead: building once would not be the same code. The
verification on two input sets and explain's graph count decide the rest.
"""

from __future__ import annotations

import ast
import copy

import torch

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, at_break, begin, resolve
from nstviz.advisor.rewrites._source import FunctionSource

__all__ = ["HELPERS", "propose_build_once"]

HELPERS = '''\
_nstviz_built = {}  # key -> (object, its arguments): each module built once per distinct arguments


@torch._dynamo.assume_constant_result
def _nstviz_build_key(cls, *args, **kwargs):
    """Build ``cls(*args, **kwargs)`` unless built already; its key in ``_nstviz_built``."""
    def part(v):
        if v is None or isinstance(v, (bool, int, float, str, torch.device, torch.dtype)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return (type(v).__name__, *map(part, v))
        if isinstance(v, dict):
            return ("dict", *((repr(k), part(x)) for k, x in v.items()))
        if isinstance(v, torch.Tensor):
            raise TypeError(f"{cls.__qualname__}(...) takes a tensor: built once, it would keep the first call's values")
        return ("id", id(v))  # kept alive with the object below, so the id is not reused
    key = repr((cls.__module__, cls.__qualname__, part(args), part(kwargs)))
    if key not in _nstviz_built:
        obj = cls(*args, **kwargs)
        if any(True for _ in obj.parameters()):
            raise TypeError(f"{cls.__qualname__}(...) has parameters: built once, they would not be initialised anew on each call")
        _nstviz_built[key] = (obj, args, kwargs)
    return key
'''
"""The helpers the rewritten function reads, pasted before it (and bound in its module)."""


def _helpers() -> dict[str, object]:
    ns: dict[str, object] = {"torch": torch}
    exec(compile(HELPERS, "<nstviz build-once helpers>", "exec"), ns)
    return {"_nstviz_built": ns["_nstviz_built"], "_nstviz_build_key": ns["_nstviz_build_key"]}


def _module_class(node: ast.expr, src: FunctionSource) -> str | None:
    """The name of the ``nn.Module`` subclass a call's callee names in the function's globals, or None."""
    cls = resolve(node, src)
    return cls.__qualname__ if isinstance(cls, type) and issubclass(cls, torch.nn.Module) else None


class _BuildOnce(ast.NodeTransformer):
    """``name = ModuleClass(...)`` statements (in any block) -> the key lookup and the built object."""

    def __init__(self, src: FunctionSource, tree: ast.FunctionDef) -> None:
        self.src, self.tree = src, tree
        self.done: list[str] = []
        self.lines: list[tuple[int, int]] = []

    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            self.visit(s)
            value = s.value if isinstance(s, ast.Assign) else None
            if (
                isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                and isinstance(value, ast.Call) and (cls := _module_class(value.func, self.src)) is not None
            ):
                key = f"_nstviz_k{len(self.done)}"
                self.done.append(cls)
                self.lines.append((s.lineno, s.end_lineno or s.lineno))
                build = ast.Call(func=ast.Name(id="_nstviz_build_key", ctx=ast.Load()),
                                 args=[copy.deepcopy(value.func), *value.args], keywords=value.keywords)
                lookup = ast.Subscript(
                    value=ast.Subscript(value=ast.Name(id="_nstviz_built", ctx=ast.Load()),
                                        slice=ast.Name(id=key, ctx=ast.Load()), ctx=ast.Load()),
                    slice=ast.Constant(value=0), ctx=ast.Load())
                # two statements: the dict is read after the key call built the entry (Dynamo reads it then)
                out.append(ast.copy_location(ast.Assign(targets=[ast.Name(id=key, ctx=ast.Store())], value=build), s))
                out.append(ast.copy_location(ast.Assign(targets=s.targets, value=lookup), s))
            else:
                out.append(s)
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, self._block(stmts))
        for h in getattr(node, "handlers", []) or []:
            h.body = self._block(h.body)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node is not self.tree:
            return node  # a nested def builds its own objects: not this function's
        return self.generic_visit(node)


def propose_build_once(fn: object, brk: BreakSite | None = None) -> Proposal:
    """One rewrite of ``fn`` that builds every ``name = ModuleClass(...)`` of it once per distinct arguments.

    ``brk.line``: the line of ``fn`` that calls the constructor the break is in; that call must be
    among the ones rewritten.
    """
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    new_def = copy.deepcopy(src.tree)
    t = _BuildOnce(src, new_def)
    t.visit(new_def)
    if not t.done or not at_break(src, brk, t.lines):
        out.fits = False
        out.notes.append("no `name = SomeModule(...)` construction at the break")
        return out
    ast.fix_missing_locations(new_def)
    what = ", ".join(f"`{c}(...)`" for c in dict.fromkeys(t.done))
    why = (f"{what} built in the compiled code on every call broke the graph (Dynamo cannot build a module there); "
           "each is built once per distinct arguments, outside the graph, by an assume_constant_result helper")
    out.rewrites.append(Rewrite.of(
        src, new_def, "build-once", f"{src.fn.__qualname__}: {what} built once per distinct arguments", why,
        before=f"import torch\n\n{HELPERS}\n\n", module_globals=_helpers()))
    return out
