"""A 0-d integer buffer used as a size becomes the Python int it was made from.

EnCodec's ``EncodecConv1d`` keeps ``stride``, ``kernel_size`` and ``padding_total`` as 0-d int64
buffers (``nn.Buffer(torch.tensor(self.conv.stride[0]), persistent=False)``) and computes its
padding from them: the padding is then a tensor, and ``if length <= max_pad`` in ``_pad1d``
branches on tensor data (GB0170, once per layer). The buffers are constants: ``__init__`` builds
each from attributes of ``self`` (``self.conv.stride[0]``) and no method writes it. The rewrite
replaces every read of such a buffer, in the class's methods, with the expression it was built
from, and the arithmetic on it with Python arithmetic (``torch.ceil(n)`` -> ``math.ceil(n)``,
``n.to(torch.int64)`` -> ``int(n)``), so the sizes are ints Dynamo decides while tracing.

Sure only under these rules, each checked: the buffer is registered in ``__init__`` (top level) with
``persistent=False`` (a checkpoint cannot overwrite it), from int arithmetic on constants and
attributes of ``self``; no other method of the class assigns or mutates it; every read is in Python
number arithmetic or passed as an argument. Size arithmetic on a float tensor (``a / b`` in float32)
then runs in float64: equal for every length below 2**23 frames; verification on the inputs decides.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import math
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, call, resolve
from nstviz.advisor.rewrites._source import (
    FunctionSource,
    RewriteError,
    build_function,
    function_source,
    installed,
)

__all__ = ["GroupRewrite", "constant_buffers", "methods_of", "owner_class", "propose_buffer_ints", "writer_of"]

_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_NUM_OPS = (*_INT_OPS, ast.Div, ast.Pow)
_MATH = {"ceil": "math.ceil", "floor": "math.floor", "trunc": "math.trunc"}
_TENSOR_CTORS = {"tensor", "as_tensor", "scalar_tensor"}


@dataclass
class GroupRewrite(Rewrite):
    """A rewrite of several functions at once (the methods of one class), installed and undone together."""

    others: list[tuple[types.FunctionType, types.FunctionType]] = field(default_factory=list)

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block with every rewritten function in place (and the config); always undone."""
        with contextlib.ExitStack() as stack:
            stack.enter_context(super().applied())
            for old, new in self.others:
                stack.enter_context(installed(old, new))
            yield


def owner_class(fn: object) -> type | None:
    """The class a function is defined in (by its qualified name), None for a module-level function."""
    from nstviz.advisor.rewrites._source import raw_function

    try:
        raw = raw_function(fn)
    except RewriteError:
        return None
    parts = raw.__qualname__.split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    owner: object = sys.modules.get(raw.__module__)
    for p in parts[:-1]:
        owner = getattr(owner, p, None)
    return owner if isinstance(owner, type) else None


def _strip_tensor(node: ast.expr, src: FunctionSource) -> ast.expr:
    """``torch.tensor(e, dtype=...)`` -> ``e`` (the number a 0-d tensor is made of), recursively."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_CTORS \
            and resolve(node.func.value, src) is torch and len(node.args) == 1:
        return _strip_tensor(node.args[0], src)
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            setattr(node, name, _strip_tensor(value, src))
    return node


def _self_int_expr(node: ast.expr) -> bool:
    """Int arithmetic on int constants and attribute chains of ``self`` (``self.conv.stride[0]``)."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _INT_OPS) and _self_int_expr(node.left) and _self_int_expr(node.right)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and _self_int_expr(node.operand)
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and type(node.slice.value) is int and _self_int_expr(node.value)
    if isinstance(node, ast.Attribute):
        root: ast.expr = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            if isinstance(root, ast.Subscript) and not (isinstance(root.slice, ast.Constant)
                                                        and type(root.slice.value) is int):
                return False
            root = root.value
        return isinstance(root, ast.Name) and root.id == "self"
    return False


def _registered(stmt: ast.stmt, src: FunctionSource) -> tuple[str, ast.expr] | None:
    """``(name, value)`` for ``self.X = nn.Buffer(v, persistent=False)`` / ``self.register_buffer("X", v, persistent=False)``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
        t, c = stmt.targets[0], stmt.value
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                and resolve(c.func, src) is getattr(torch.nn, "Buffer", object()) and len(c.args) == 1 \
                and _not_persistent(c):
            return t.attr, c.args[0]
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        c = stmt.value
        f = c.func
        if isinstance(f, ast.Attribute) and f.attr == "register_buffer" and isinstance(f.value, ast.Name) \
                and f.value.id == "self" and len(c.args) == 2 and isinstance(c.args[0], ast.Constant) \
                and isinstance(c.args[0].value, str) and _not_persistent(c):
            return c.args[0].value, c.args[1]
    return None


def _not_persistent(c: ast.Call) -> bool:
    return any(k.arg == "persistent" and isinstance(k.value, ast.Constant) and k.value.value is False
               for k in c.keywords)


class _Subst(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return copy.deepcopy(self.env[node.id]) if isinstance(node.ctx, ast.Load) and node.id in self.env else node


def constant_buffers(cls: type, notes: list[str] | None = None) -> dict[str, ast.expr]:
    """The class's non-persistent 0-d integer buffers that ``__init__`` builds from ``self``'s attributes.

    Maps the buffer's name to the int expression it was made from (locals of ``__init__``
    substituted: ``stride = torch.tensor(self.conv.stride[0]); self.stride = nn.Buffer(stride, ...)``
    gives ``self.conv.stride[0]``). A buffer another method assigns or mutates is left out.
    """
    notes = notes if notes is not None else []
    init = next((k.__dict__["__init__"] for k in cls.__mro__ if "__init__" in k.__dict__), None)
    try:
        src = function_source(init)
    except RewriteError as e:
        notes.append(f"{cls.__qualname__}.__init__: {e}")
        return {}
    env: dict[str, ast.expr] = {}
    out: dict[str, ast.expr] = {}
    for stmt in src.tree.body:
        reg = _registered(stmt, src)
        if reg is not None:
            name, value = reg
            expr = _strip_tensor(_Subst(env).visit(copy.deepcopy(value)), src)
            if _self_int_expr(expr):
                out[name] = expr
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            env[stmt.targets[0].id] = _Subst(env).visit(copy.deepcopy(stmt.value))
            continue
        for n in ast.walk(stmt):  # assigned in a nested block: no longer known
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                env.pop(n.id, None)
    for name in list(out):
        writer = writer_of(cls, name)
        if writer:
            notes.append(f"{cls.__qualname__}.{name}: written in {writer}; not a constant")
            del out[name]
    return out


def writer_of(cls: type, name: str) -> str | None:
    """The first method of the class (other than ``__init__``) that assigns or mutates ``self.<name>``."""
    for attr, value in [(a, v) for k in _own_classes(cls) for a, v in k.__dict__.items()]:
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if attr == "__init__" or not isinstance(fn, types.FunctionType):
            continue
        try:
            tree = function_source(fn).tree
        except RewriteError:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.value, ast.Name) and n.value.id == "self":
                if isinstance(n.ctx, (ast.Store, ast.Del)):
                    return attr
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                    and isinstance(n.func.value, ast.Attribute) and n.func.value.attr == name:
                return attr
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Attribute) \
                    and n.value.attr == name:
                return attr
    return None


class _Unsure(Exception):
    """A buffer read in a place the rule cannot prove a Python int fits."""


class _Method:
    """One method's rewrite: buffer reads replaced, arithmetic on Python numbers made Python."""

    def __init__(self, src: FunctionSource, buffers: dict[str, ast.expr], py_methods: set[str]) -> None:
        self.src, self.buffers, self.py_methods = src, buffers, py_methods
        self.returns_py: bool | None = None
        self.used: list[str] = []

    def _is_buffer(self, e: ast.expr) -> bool:
        return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" \
            and e.attr in self.buffers and isinstance(e.ctx, ast.Load)

    def _has_buffer(self, e: ast.AST) -> bool:
        return any(self._is_buffer(n) for n in ast.walk(e) if isinstance(n, ast.expr))

    def num(self, e: ast.expr, py: set[str]) -> tuple[ast.expr, bool]:
        """``e`` rewritten, and whether it is a Python number now."""
        if self._is_buffer(e):
            self.used.append(e.attr)  # type: ignore[attr-defined]
            return ast.copy_location(copy.deepcopy(self.buffers[e.attr]), e), True  # type: ignore[attr-defined]
        if isinstance(e, ast.Constant):
            return e, isinstance(e.value, (int, float)) and not isinstance(e.value, bool)
        if isinstance(e, ast.Name):
            return e, e.id in py
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape" \
                and not self._has_buffer(e):
            return e, True
        if isinstance(e, ast.BinOp) and isinstance(e.op, _NUM_OPS):
            (a, ap), (b, bp) = self.num(e.left, py), self.num(e.right, py)
            if ap and bp:
                return ast.copy_location(ast.BinOp(left=a, op=e.op, right=b), e), True
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            o, op = self.num(e.operand, py)
            if op:
                return ast.copy_location(ast.UnaryOp(op=e.op, operand=o), e), True
        if isinstance(e, ast.Call):
            return self._call(e, py)
        if self._has_buffer(e):
            raise _Unsure(ast.unparse(e))
        return e, False

    def _call(self, e: ast.Call, py: set[str]) -> tuple[ast.expr, bool]:
        f = e.func
        if isinstance(f, ast.Attribute) and len(e.args) == 1 and not e.keywords and f.attr in _MATH \
                and resolve(f.value, self.src) is torch:
            a, ap = self.num(e.args[0], py)
            if ap:
                return ast.copy_location(call(_MATH[f.attr], a), e), True
        if isinstance(f, ast.Attribute) and f.attr in ("to", "long", "int", "float") and not e.keywords:
            v, vp = self.num(f.value, py)
            dtype = resolve(e.args[0], self.src) if f.attr == "to" and len(e.args) == 1 else None
            kind = {"long": "int", "int": "int", "float": "float"}.get(f.attr)
            if isinstance(dtype, torch.dtype):
                kind = "float" if dtype.is_floating_point else "int" if not dtype.is_complex else None
            if vp and kind and (f.attr == "to") == bool(e.args):
                return ast.copy_location(call(kind, v), e), True
        if isinstance(f, ast.Name) and f.id in ("max", "min", "abs", "int", "float", "round") and not e.keywords:
            args = [self.num(a, py) for a in e.args]
            if all(p for _, p in args):
                return ast.copy_location(ast.Call(func=f, args=[a for a, _ in args], keywords=[]), e), True
        if isinstance(f, ast.Name) and f.id == "len" and not self._has_buffer(e):
            return e, True
        if isinstance(f, ast.Attribute) and f.attr == "size" and len(e.args) == 1 and not self._has_buffer(e):
            return e, True
        # any other call: buffer reads may be its arguments (or tuple elements of them), as Python ints
        args = [self._arg(a, py) for a in e.args]
        kws = [ast.keyword(arg=k.arg, value=self._arg(k.value, py)) for k in e.keywords]
        if self._has_buffer(f):
            raise _Unsure(ast.unparse(e))
        is_py = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
            and f.attr in self.py_methods
        return ast.copy_location(ast.Call(func=f, args=args, keywords=kws), e), is_py

    def _arg(self, a: ast.expr, py: set[str]) -> ast.expr:
        if isinstance(a, (ast.Tuple, ast.List)):
            return ast.copy_location(type(a)(elts=[self._arg(x, py) for x in a.elts], ctx=ast.Load()), a)
        return self.num(a, py)[0]

    def block(self, stmts: list[ast.stmt], py: set[str]) -> list[ast.stmt]:
        return [self.stmt(s, py) for s in stmts]

    def stmt(self, s: ast.stmt, py: set[str]) -> ast.stmt:
        s = copy.copy(s)
        if isinstance(s, ast.Assign):
            s.value, is_py = self.num(s.value, py)
            for t in s.targets:
                if self._has_buffer(t):
                    raise _Unsure(ast.unparse(t))
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        py.discard(n.id)
            if is_py and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                py.add(s.targets[0].id)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                s.value, is_py = self.num(s.value, py)
                self.returns_py = is_py if self.returns_py is None else (self.returns_py and is_py)
        elif isinstance(s, ast.Expr):
            s.value = self.num(s.value, py)[0]
        elif isinstance(s, ast.If):
            s.test = self.num(s.test, py)[0]
            a, b = set(py), set(py)
            s.body, s.orelse = self.block(s.body, a), self.block(s.orelse, b)
            py.intersection_update(a & b)
        elif isinstance(s, (ast.For, ast.While)):
            for n in ast.walk(s):  # anything the loop assigns is unknown on its next turn
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    py.discard(n.id)
            if isinstance(s, ast.For):
                s.iter = self.num(s.iter, py)[0]
            else:
                s.test = self.num(s.test, py)[0]
            inner = set(py)
            s.body, s.orelse = self.block(s.body, inner), self.block(s.orelse, set(inner))
        elif isinstance(s, ast.With):
            s.items = [ast.withitem(context_expr=self.num(i.context_expr, py)[0], optional_vars=i.optional_vars)
                       for i in s.items]
            s.body = self.block(s.body, py)
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            s.value, is_py = self.num(s.value, py)
            if not (is_py and s.target.id in py):
                py.discard(s.target.id)
        elif self._has_buffer(s):
            raise _Unsure(ast.unparse(s).splitlines()[0])
        else:  # any other statement: what it assigns is no longer known to be a Python number
            for n in ast.walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    py.discard(n.id)
        return s

    def rewrite(self) -> ast.FunctionDef:
        d = copy.deepcopy(self.src.tree)
        self.returns_py, self.used = None, []
        d.body = self.block(d.body, set())
        return d


def _own_classes(cls: type) -> list[type]:
    """The class and its bases up to (not including) torch's and ``object``: where its methods come from."""
    return [k for k in cls.__mro__ if k is not object and not k.__module__.startswith("torch")]


def methods_of(cls: type) -> list[tuple[str, FunctionSource]]:
    """``(name, source)`` of the class's own methods (and its bases' up to torch's), ``__init__`` aside."""
    out, seen = [], set()
    for k in _own_classes(cls):
        for attr, value in k.__dict__.items():
            if attr in seen or attr == "__init__" or not isinstance(value, types.FunctionType):
                seen.add(attr)
                continue
            seen.add(attr)
            with contextlib.suppress(RewriteError):
                out.append((attr, function_source(value)))
    return out


def propose_buffer_ints(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Constant 0-d int buffers of the break's class read as the Python ints they were built from."""
    out = Proposal()
    cls = owner_class(fn)
    if cls is None:
        out.notes.append("not a method of a class: no buffers of `self` to read as ints")
        out.fits = False
        return out
    buffers = constant_buffers(cls, out.notes)
    if not buffers:
        out.notes.append(f"{cls.__qualname__}: no non-persistent 0-d int buffer built from `self` in __init__")
        out.fits = False
        return out
    readers = [(a, s) for a, s in methods_of(cls)
               if any(isinstance(n, ast.Attribute) and n.attr in buffers and isinstance(n.value, ast.Name)
                      and n.value.id == "self" for n in ast.walk(s.tree))]
    py_methods: set[str] = set()
    done: dict[str, tuple[FunctionSource, ast.FunctionDef, list[str]]] = {}
    for _ in range(3):  # a method returning an int now makes its callers' values ints: to a fixed point
        done, changed = {}, False
        for attr, s in readers:
            m = _Method(s, buffers, py_methods)
            try:
                d = m.rewrite()
            except _Unsure as e:
                out.notes.append(f"{cls.__qualname__}.{attr}: `{e}` uses a buffer as a tensor; not rewritten")
                continue
            done[attr] = (s, d, list(dict.fromkeys(m.used)))
            if m.returns_py and attr not in py_methods:
                py_methods.add(attr)
                changed = True
        if not changed:
            break
    if not done:
        return out
    used = list(dict.fromkeys(b for _, _, u in done.values() for b in u))
    funcs = [(s.fn, build_function(s, d, {"math": math, "torch": torch})) for s, d, _ in done.values()]
    what = ", ".join(f"`self.{b}` -> `{ast.unparse(buffers[b])}`" for b in used)
    source = _paste(cls, [(a, s, d) for a, (s, d, _) in done.items()], used, buffers, brk)
    desc = f"{cls.__qualname__}: {what} (constant 0-d int buffers read as Python ints, in {', '.join(done)})"
    out.rewrites.append(GroupRewrite(remedy="buffer-int", description=desc, source=source,
                                     original=funcs[0][0], function=funcs[0][1], others=funcs[1:]))
    if _uses_rnn(cls):
        # once the sizes are ints, the module's LSTM is the next break (GB0014): allow_rnn traces it.
        # Alone, allow_rnn does not lower EnCodec's graph count (33 -> 34); verification decides here too.
        out.rewrites.append(GroupRewrite(
            remedy="buffer-int", description=desc + ", with torch._dynamo.config.allow_rnn = True",
            source=source + "\n# nstviz: and trace the module's LSTM/GRU/RNN in the graph (GB0014)\n"
                            "torch._dynamo.config.allow_rnn = True\n",
            original=funcs[0][0], function=funcs[0][1], others=funcs[1:], config={"allow_rnn": True}))
    return out


def _uses_rnn(cls: type) -> bool:
    """Whether the class's module builds an ``nn.LSTM``, ``nn.GRU`` or ``nn.RNN`` (read from its source)."""
    import inspect

    try:
        text = inspect.getsource(sys.modules[cls.__module__])
    except (OSError, TypeError, KeyError):
        return False
    return any(f"{k}(" in text for k in ("nn.LSTM", "nn.GRU", "nn.RNN"))


def _paste(cls: type, defs: list[tuple[str, FunctionSource, ast.FunctionDef]], used: list[str],
           buffers: dict[str, ast.expr], brk: BreakSite | None) -> str:
    """The rewritten methods, then assigned to the class (after importing what they read from its module)."""
    mod = cls.__module__
    glob = defs[0][1].fn.__globals__
    names: list[str] = []
    for _, _, d in defs:
        for n in ast.walk(d):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in glob and n.id not in names:
                names.append(n.id)
    head = ["import math", "import torch"]
    if mod != "__main__":
        names = [cls.__name__, *(n for n in names if n not in (cls.__name__, "math", "torch"))]
        head.append(f"from {mod} import {', '.join(names)}")
    gb = f" ({brk.gb_id})" if brk and brk.gb_id else ""
    why = (f"# nstviz: {', '.join(f'self.{b}' for b in used)}: 0-d int buffer(s) built from "
           f"{'; '.join(ast.unparse(buffers[b]) for b in used)} and never written; as tensors they made the padding "
           f"a tensor and its `if` a data-dependent branch{gb}. Read as Python ints, the sizes are decided while tracing.")
    body = [ast.unparse(ast.fix_missing_locations(d)) for _, _, d in defs]
    assign = [f"{cls.__name__}.{a} = {a}" for a, _, _ in defs]
    return "\n".join([*head, "", why, *(b + "\n" for b in body), *assign]) + "\n"
