"""The :class:`Rewrite` a remedy proposes, the break it answers, and the purity rules."""

from __future__ import annotations

import ast
import builtins
import contextlib
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from nstviz.advisor.rewrites._source import (
    FunctionSource,
    RewriteError,
    build_function,
    function_source,
    installed,
)
from nstviz.capture._torch_compat import dynamo_config_patch
from nstviz.capture.remedy import Remedy

__all__ = ["BreakSite", "Proposal", "Rewrite"]


@dataclass
class BreakSite:
    """The break Dynamo reported in a function: registry id, file line and message."""

    gb_id: str | None = None
    line: int | None = None
    message: str = ""
    flags: tuple[str, ...] = ()
    """``torch._dynamo.config`` flags of the run that showed the break (a flag tried and not kept), else ()."""


@dataclass
class Rewrite(Remedy):
    """One rewrite of a function, applicable live and pasteable (a capture :class:`~nstviz.capture.remedy.Remedy`)."""

    remedy: str
    """``branch-where``, ``branch-cond``, ``branch-keep``, ``item-check``, ``loop-vectorise``, ``loop-vmap``, ``loop-unbind``,
    ``loop-range``, ``custom-op``, ..."""
    description: str
    source: str
    """Paste-ready code: the full rewritten ``def`` (and any helper it needs), with a comment why."""
    original: types.FunctionType
    function: Callable[..., Any]
    """The rewritten function, with the original's globals, defaults and closure."""
    config: dict[str, Any] = field(default_factory=dict)
    """``torch._dynamo.config`` flags the rewrite needs (applied with ``config.patch``)."""
    stands_for: str = ""
    """Another remedy whose place it takes in the advisor's order: the whole function as an op
    (``custom-op``) goes where the op of its C call (``call-op``) would, when the function needs that
    call's values in Python."""
    module_globals: dict[str, Any] = field(default_factory=dict)
    """Helpers the rewritten code reads as globals of the original's module (its pasted source
    defines them and binds them there): set while the rewrite is applied, so the original's
    ``__code__`` can be swapped (every reference to it sees the rewrite), removed after."""

    @classmethod
    def of(cls, src: FunctionSource, new_def: ast.FunctionDef, remedy: str, description: str, why: str, *,
           before: str = "", extras: dict[str, Any] | None = None, **fields: Any) -> Rewrite:
        """The rewrite of ``src`` into ``new_def``, pasted and live.

        The pasted ``def`` is commented ``why`` and follows ``before``; the live function sees ``torch`` (and
        ``extras``) as globals.
        """
        return cls(remedy=remedy, description=description,
                   source=paste_source(src, new_def, why, before=before), original=src.fn, function=build_function(src, new_def, {"torch": torch, **(extras or {})}),
                   **fields)

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block with the rewrite in place of the original (and its config); always undone."""
        with dynamo_config_patch(self.config) if self.config else contextlib.nullcontext():
            with module_globals_set(self.original.__globals__, self.module_globals):
                with installed(self.original, self.function):  # type: ignore[arg-type]
                    yield


@contextlib.contextmanager
def module_globals_set(namespace: dict[str, Any], values: dict[str, Any]) -> Iterator[None]:
    """Bind ``values`` in a module's namespace while the block runs; names it had are refused."""
    taken = sorted(n for n in values if n in namespace)
    if taken:
        raise RewriteError(f"the rewrite's helper names are taken in {namespace.get('__name__')}: {', '.join(taken)}")
    namespace.update(values)
    try:
        yield
    finally:
        for name in values:
            namespace.pop(name, None)


@dataclass
class Proposal:
    """What a remedy found: rewrites to verify, and notes (why none, or that none is needed)."""

    rewrites: list[Rewrite] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fits: bool = True
    """False: the remedy is made for other code (not a transformers experts module, no int
    buffers); its notes say so, and are no reason to report the function as rejected."""


# -- purity: only tensor ops and local assignments -------------------------------------------------

_IMPURE_METHODS = {
    "item", "tolist", "numpy", "backward", "append", "extend", "insert", "pop", "update", "clear",
    "remove", "setdefault", "register_buffer", "register_parameter", "copy_", "requires_grad_",
    "retain_grad", "record_stream", "__setitem__", "write", "print",
}
_PURE_BUILTINS = {"abs", "len", "min", "max", "isinstance", "range", "tuple", "list", "float", "int", "bool"}


def begin(fn: object, brk: BreakSite | None) -> tuple[BreakSite, Proposal, FunctionSource | None]:
    """What every source remedy starts from: the break (or an unknown one), an empty proposal, the source.

    The source is None when ``fn`` cannot be read as a plain ``def``; the proposal then holds why.
    """
    out = Proposal()
    try:
        return brk or BreakSite(), out, function_source(fn)
    except RewriteError as e:
        out.notes.append(str(e))
        return brk or BreakSite(), out, None


def at_break(src: FunctionSource, brk: BreakSite, spans: list[tuple[int, int]]) -> bool:
    """Whether the break's line falls in one of ``spans`` (lines of ``src``'s text); True when the line is unknown."""
    line = src.local_line(brk.line)
    return line is None or any(a <= line <= b for a, b in spans)


def resolve(node: ast.expr, src: FunctionSource) -> Any:
    """The object an attribute chain like ``torch.nn.functional.pad`` names in the function's globals."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    fn = src.fn
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False))
    if node.id in cells:
        try:
            obj = cells[node.id].cell_contents
        except ValueError:
            return None
    elif node.id in fn.__globals__:
        obj = fn.__globals__[node.id]
    else:
        obj = getattr(builtins, node.id, None)
    for n in reversed(names):
        obj = getattr(obj, n, None)
    return obj


def _is_torch_callable(obj: Any) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", "") or ""
    return callable(obj) and mod.startswith("torch") and not name.endswith("_")


def _tensor_method(name: str) -> bool:
    return hasattr(torch.Tensor, name) and not name.startswith("_")


def pure_expr(node: ast.AST, src: FunctionSource, local: set[str]) -> bool:
    """True when evaluating ``node`` only computes: tensor ops, arithmetic, no calls with side effects."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Lambda, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, ast.ListComp,
                            ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return False
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Name):
                if f.id in local:
                    return False
                obj = resolve(f, src)
                if not (f.id in _PURE_BUILTINS and obj is getattr(builtins, f.id)) and not _is_torch_callable(obj):
                    return False
            elif isinstance(f, ast.Attribute):
                if f.attr in _IMPURE_METHODS or f.attr.endswith("_"):
                    return False
                root: ast.expr = f
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id not in local:
                    if not _is_torch_callable(resolve(f, src)):
                        return False
                elif not _tensor_method(f.attr):  # a method of a local value: only Tensor methods
                    return False
            else:
                return False
    return True


def pure_block(stmts: list[ast.stmt], src: FunctionSource, local: set[str]) -> bool:
    """Simple assignments (to local names) and a final ``return``, all of pure expressions."""
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1 or not _name_targets(s.targets[0]):
                return False
            if not pure_expr(s.value, src, local):
                return False
        elif isinstance(s, ast.Return):
            if i != len(stmts) - 1 or s.value is None or not pure_expr(s.value, src, local):
                return False
        elif not isinstance(s, ast.Pass):
            return False
    return True


def _name_targets(t: ast.expr) -> list[str]:
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts):
        return [e.id for e in t.elts]  # type: ignore[attr-defined]
    return []


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ast.Assign):
            for n in _name_targets(s.targets[0]):
                if n not in out:
                    out.append(n)
    return out


def function_locals(tree: ast.FunctionDef) -> set[str]:
    """Parameters and every name the function assigns."""
    a = tree.args
    out = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    if a.vararg:
        out.add(a.vararg.arg)
    if a.kwarg:
        out.add(a.kwarg.arg)
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
    return out


def fresh_name(name: str, taken: set[str]) -> str:
    """``name``, with ``_`` appended until it is not in ``taken``; the result is added to ``taken``."""
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def static_test(node: ast.expr, *, flags: bool = False) -> bool:
    """A condition Dynamo decides while tracing, never on tensor data: ``x is None``, ``isinstance(...)``, ``"a" in d``.

    ``flags``: a bare name or attribute (``soft_labels``, ``self.training``) counts too, taken for a Python flag;
    were it a tensor, a rewrite that keeps it in Python breaks as the code did, and is not kept.
    """
    if flags and isinstance(node, (ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in node.ops):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"isinstance", "hasattr", "callable"}:
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return static_test(node.operand, flags=flags)
    if isinstance(node, ast.BoolOp):
        return all(static_test(v, flags=flags) for v in node.values)
    return isinstance(node, ast.Constant)


_SHAPE_ATTRS = {"shape", "ndim"}
_SHAPE_CALLS = {"size", "dim", "numel", "ndimension"}


def shape_only(node: ast.expr, names: frozenset[str] = frozenset()) -> bool:
    """True when a condition reads tensors only through their shapes (no data: no break).

    ``names``: locals that hold sizes (:func:`size_names`), e.g. ``expected = x.numel()``.
    """
    def only(n: ast.expr) -> bool:
        return shape_only(n, names)

    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, (ast.BinOp,)):
        return only(node.left) and only(node.right)
    if isinstance(node, ast.UnaryOp):
        return only(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(only(v) for v in node.values)
    if isinstance(node, ast.Compare):
        return only(node.left) and all(only(c) for c in node.comparators)
    if isinstance(node, ast.IfExp):  # `a.numel() if soft else b.numel()`: a size either way
        return only(node.body) and only(node.orelse)
    if isinstance(node, ast.Subscript):
        return _shape_source(node.value) and isinstance(node.slice, (ast.Constant, ast.UnaryOp))
    return _shape_source(node)


def size_names(tree: ast.AST) -> frozenset[str]:
    """The local names every assignment of which in ``tree`` is a size (:func:`shape_only`): ``n = x.numel()``."""
    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    values.setdefault(t.id, []).append(node.value)
                else:  # unpacked or stored elsewhere: its names are not followed
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            values.setdefault(n.id, []).append(t)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            values.setdefault(node.target.id, []).append(node.value if node.value is not None else node.target)
        elif isinstance(node, (ast.For, ast.NamedExpr, ast.comprehension)):  # bound by a loop: not followed
            for n in ast.walk(getattr(node, "target", None) or ast.Pass()):
                if isinstance(n, ast.Name):
                    values.setdefault(n.id, []).append(n)
    names: frozenset[str] = frozenset()
    while True:  # a size made of sizes: to a fixed point
        grown = frozenset(k for k, vs in values.items() if all(shape_only(v, names) for v in vs))
        if grown == names:
            return names
        names = grown


def _shape_source(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in _SHAPE_ATTRS
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _SHAPE_CALLS:
            return True
        return isinstance(f, ast.Name) and f.id == "len"
    return False


def tensor_bool(node: ast.expr) -> ast.expr:
    """A condition as a tensor expression: ``and``/``or``/``not`` become ``&``/``|``/``~``.

    Operands decided while tracing (``x is not None``) keep Python's short circuit, as conditional
    expressions: ``x is not None and m.any()`` -> ``(m.any() if x is not None else torch.tensor(False))``,
    so ``m`` is never read where it is None.
    """
    if isinstance(node, ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        op: ast.operator = ast.BitAnd() if is_and else ast.BitOr()
        out = tensor_bool(node.values[-1])
        for v in reversed(node.values[:-1]):
            if static_test(v):
                short = call("torch.tensor", ast.Constant(value=not is_and))
                out = ast.IfExp(test=v, body=out, orelse=short) if is_and else ast.IfExp(test=v, body=short, orelse=out)
            else:
                out = ast.BinOp(left=tensor_bool(v), op=op, right=out)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ast.UnaryOp(op=ast.Invert(), operand=tensor_bool(node.operand))
    return node


class Renamer(ast.NodeTransformer):
    """Rename loads of some names (``n`` -> ``mapping[n]``)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.mapping:
            return ast.copy_location(ast.Name(id=self.mapping[node.id], ctx=node.ctx), node)
        return node


def call(func: str, *args: ast.expr, **kw: ast.expr) -> ast.Call:
    """``a.b.c(*args, **kw)`` as an AST node."""
    parts = func.split(".")
    f: ast.expr = ast.Name(id=parts[0], ctx=ast.Load())
    for p in parts[1:]:
        f = ast.Attribute(value=f, attr=p, ctx=ast.Load())
    return ast.Call(func=f, args=list(args), keywords=[ast.keyword(arg=k, value=v) for k, v in kw.items()])


def paste_source(src: FunctionSource, new_def: ast.FunctionDef, why: str, before: str = "") -> str:
    """The paste-ready ``def`` (original decorators kept) with a one-line comment why."""
    d = ast.fix_missing_locations(new_def)
    d.decorator_list = list(src.tree.decorator_list)
    _quote_foreign_annotations(d)
    text = ast.unparse(d)
    return f"{before}# nstviz: {why}\n{text}\n"


def _quote_foreign_annotations(d: ast.FunctionDef) -> None:
    """Annotations naming more than builtins and ``torch`` become strings.

    The pasted ``def`` evaluates them where those names may not exist (``**kwargs: Unpack[TransformersKwargs]``).
    """
    a = d.args
    args = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]

    def quoted(ann: ast.expr | None) -> ast.expr | None:
        if ann is None or isinstance(ann, ast.Constant):
            return ann
        names = {n.id for n in ast.walk(ann) if isinstance(n, ast.Name)}
        return ast.Constant(value=ast.unparse(ann)) if names - {"torch", *dir(builtins)} else ann

    for x in args:
        x.annotation = quoted(x.annotation)
    d.returns = quoted(d.returns)
