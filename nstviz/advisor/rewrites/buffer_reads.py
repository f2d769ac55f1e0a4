"""A branch on a buffer's elements reads the buffer once, at the function's top, as Python numbers.

EoMT's ``forward`` loops over its layers and, in each of the last blocks, branches on an element
of ``self.attn_mask_probs``, a float buffer a training schedule anneals from outside ``forward``
(``if ... (self.training or self.attn_mask_probs[k] > 0):``), then passes the element on as
``prob`` to a helper that branches again (``if prob < 1:``). Each element is a tensor, each
branch data-dependent (GB0170), and a break inside a loop makes Dynamo run the whole frame
eagerly. Read once with ``.tolist()`` at the top of the function, the elements are Python numbers:
what is left is one break at the function's edge, before the loop, and the branches are decided
while tracing (Dynamo guards on the values, so a schedule that changes them recompiles).

Sure only under these rules, each checked: ``self.<name>`` is registered as a buffer in the
class's ``__init__`` (``nn.Buffer`` or ``register_buffer``), no method of the class assigns or
mutates it, the break's own ``if`` reads an element of it (``self.<name>[i]``), and the function
never reads it whole. Every element read in the function is then a Python number: arithmetic on
it gives the same values (a 0-d tensor does not promote another tensor's dtype, and neither does
a Python number); verification on the inputs decides.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin
from nstviz.advisor.rewrites._source import FunctionSource, RewriteError, function_source
from nstviz.advisor.rewrites.buffers import methods_of, owner_class, writer_of

__all__ = ["propose_buffer_reads"]

_PREFIX = "_nstviz_"


def _self_attr(node: ast.AST) -> str | None:
    """``X`` for ``self.X`` read, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
            and isinstance(node.ctx, ast.Load):
        return node.attr
    return None


def registered_buffers(cls: type) -> set[str]:
    """Names the class's ``__init__`` registers as buffers, persistent or not, at any depth.

    ``self.X = nn.Buffer(...)`` or ``self.register_buffer("X", ...)``.
    """
    init = next((k.__dict__["__init__"] for k in cls.__mro__ if "__init__" in k.__dict__), None)
    try:
        tree = function_source(init).tree
    except RewriteError:
        return set()
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Call):
            t, f = n.targets[0], n.value.func
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                    and isinstance(f, ast.Attribute) and f.attr == "Buffer":
                out.add(t.attr)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer" \
                and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            out.add(n.args[0].value)
    return out


def _tests_at(src: FunctionSource, line: int | None) -> list[ast.expr]:
    """The tests of the ``if``/``while``/conditional expressions on the break's line (every one when unknown)."""
    found = []
    for n in ast.walk(src.tree):
        if isinstance(n, (ast.If, ast.While, ast.IfExp)):
            t = n.test
            if line is None or t.lineno <= line <= (t.end_lineno or t.lineno):
                found.append(t)
    return found


class _ReadOnce(ast.NodeTransformer):
    """``self.X[i]`` -> ``_nstviz_X[i]`` for the names given."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        name = _self_attr(node.value)
        if name in self.names and isinstance(node.ctx, ast.Load):
            node.value = ast.copy_location(ast.Name(id=_PREFIX + name, ctx=ast.Load()), node.value)
        return node


def _whole_reads(tree: ast.FunctionDef, name: str) -> bool:
    """Whether the function reads ``self.<name>`` other than element by element."""
    inside = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)}
    return any(_self_attr(n) == name and id(n) not in inside for n in ast.walk(tree))


def propose_buffer_reads(fn: object, brk: BreakSite | None = None) -> Proposal:
    """The break's ``if`` on a buffer's element: the buffer read once at the top with ``.tolist()``.

    When the ``if`` tests a parameter instead (``if prob < 1:``), the methods of the class that
    pass a buffer's element for that parameter (``self._disable(mask, prob=self.probs[k])``) are
    rewritten so: the element then arrives as a number.
    """
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    cls = owner_class(fn)
    if cls is None:
        out.fits = False
        return out
    tests = _tests_at(src, src.local_line(brk.line))
    read = {_self_attr(n.value) for t in tests for n in ast.walk(t) if isinstance(n, ast.Subscript)} - {None}
    targets = [(src, read)] if read else _callers(cls, src, {n.id for t in tests for n in ast.walk(t) if isinstance(n, ast.Name)})
    buffers = registered_buffers(cls)
    for target, names_read in targets:
        names = _constant(cls, target, names_read & buffers, out.notes)  # type: ignore[operator]
        if names:
            out.rewrites.append(_read_once(target, names, brk))
    out.fits = bool(out.rewrites or out.notes)
    return out


def _constant(cls: type, src: FunctionSource, names: set[str], notes: list[str]) -> set[str]:
    """The buffers among ``names`` no method writes and ``src`` reads only element by element."""
    out = set()
    for name in sorted(names):
        if writer := writer_of(cls, name):
            notes.append(f"`self.{name}` is written in {cls.__qualname__}.{writer}: not read once")
        elif _whole_reads(src.tree, name):
            notes.append(f"`self.{name}` is also read whole in {src.fn.__qualname__}: not read once")
        else:
            out.add(name)
    return out


def _callers(cls: type, callee: FunctionSource, tested: set[str]) -> list[tuple[FunctionSource, set[str]]]:
    """Methods of ``cls`` that pass a buffer's element (``self.X[i]``) for a parameter the callee's ``if`` tests."""
    params = [a.arg for a in callee.tree.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    name = callee.tree.name
    out = []
    for _, method in methods_of(cls):
        passed: set[str] = set()
        for call in ast.walk(method.tree):
            f = call.func if isinstance(call, ast.Call) else None
            if not (isinstance(f, ast.Attribute) and f.attr == name and isinstance(f.value, ast.Name)
                    and f.value.id in ("self", cls.__name__)):
                continue
            given = {**dict(zip(params, call.args, strict=False)), **{k.arg: k.value for k in call.keywords if k.arg}}
            passed |= {b for p, v in given.items() if p in tested and isinstance(v, ast.Subscript)
                       and (b := _self_attr(v.value)) is not None}
        if passed:
            out.append((method, passed))
    return out


def _read_once(src: FunctionSource, names: set[str], brk: BreakSite) -> Rewrite:
    """``src`` with ``names`` read once at its top (after the docstring) and every element read from the list."""
    new_def = _ReadOnce(names).visit(copy.deepcopy(src.tree))
    body = new_def.body
    at = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0
    body[at:at] = [ast.parse(f"{_PREFIX}{n} = self.{n}.tolist()").body[0] for n in sorted(names)]
    ast.fix_missing_locations(new_def)
    listed = ", ".join(f"`self.{n}`" for n in sorted(names))
    why = (f"a branch on an element of {listed} (a buffer no method writes) broke the graph "
           f"({brk.gb_id or 'GB0170'}); read once at the top with .tolist(), the elements are Python numbers and the "
           "branches are decided while tracing (one break at the top instead)")
    return Rewrite.of(
        src, new_def, "buffer-read", f"{src.fn.__qualname__}: {listed} read once as Python numbers", why)
