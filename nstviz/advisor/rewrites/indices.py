"""Remedy: a tensor element used as a Python index or shift (GB0033) becomes an index op.

``x[:, idx[i]]`` with ``idx`` a tensor (a ``topk`` index) and ``i`` a Python int indexes with a
0-d tensor, which torch reads as a Python int (``aten._local_scalar_dense``): Dynamo breaks the
graph there ("Data dependent operator", GB0033), and ``capture_scalar_outputs`` only turns the
number into an unbacked symbol whose later guards break again. Autoformer's training attention
does this in a list comprehension and again in ``v.roll(shifts=-int(idx[i]), dims=1)``.

Both have a static-shape form that keeps the index a tensor:

- ``x[:, :, t[i]]`` (full slices, then the element) -> ``torch.index_select(x, 2, t[i].reshape(1)).squeeze(2)``;
- ``x.roll(shifts=<expr of int(t[i])>, dims=d)`` -> ``torch.index_select(x, d, (arange(n) - shift) % n)``
  with ``n = x.size(d)``: element ``j`` of a roll by ``s`` is element ``(j - s) mod n`` of ``x``.

The values and the gradient are the same (``index_select`` is differentiable in ``x``). Every such
site of the function is rewritten at once; ``t`` must be a local the function assigned from a call
(a tensor op), never a parameter or a list.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, at_break, begin, call

__all__ = ["propose_index_ops"]


def _call_assigned(tree: ast.FunctionDef) -> set[str]:
    """Local names bound only from calls (``_, idx = torch.topk(...)``): tensors, not lists."""
    from_call: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        names = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        (from_call if isinstance(node.value, ast.Call) else other).update(names)
    return from_call - other


def _full_slice(node: ast.expr) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _int_dim(node: ast.expr | None) -> bool:
    """A constant dim: ``1``, ``-1``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _repeatable(node: ast.expr) -> bool:
    """``x`` or ``self.x``: evaluated more than once by the rewrite at no cost and no side effect."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class _ElementsToIndexOps(ast.NodeTransformer):
    def __init__(self, tensors: set[str]) -> None:
        self.tensors = tensors
        self.done: list[str] = []
        self.lines: list[tuple[int, int]] = []
        self._stmt: ast.stmt | None = None

    def visit(self, node: ast.AST) -> ast.AST:
        if not isinstance(node, ast.stmt):
            return super().visit(node)
        outer, self._stmt = self._stmt, node
        try:
            return super().visit(node)
        finally:
            self._stmt = outer

    def _element(self, node: ast.expr) -> bool:
        """``t[i]``: one element of a local tensor, ``i`` a name or an int constant."""
        return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.tensors
                and isinstance(node.slice, (ast.Name, ast.Constant)))

    def _scalar_of_element(self, node: ast.expr) -> ast.expr | None:
        """``int(t[i])`` / ``t[i].item()`` -> ``t[i]``."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" \
                and len(node.args) == 1 and not node.keywords and self._element(node.args[0]):
            return node.args[0]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item" \
                and not node.args and self._element(node.func.value):
            return node.func.value
        return None

    def _note(self, before: ast.AST) -> None:
        self.done.append(ast.unparse(before))
        s = self._stmt
        if s is not None:
            self.lines.append((s.lineno, s.end_lineno or s.lineno))

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        last = parts[-1]
        if not self._element(last) or not all(_full_slice(p) for p in parts[:-1]):
            return node
        dim = ast.Constant(len(parts) - 1)
        index = ast.Call(func=ast.Attribute(value=last, attr="reshape", ctx=ast.Load()), args=[ast.Constant(1)],
                         keywords=[])
        picked = call("torch.index_select", node.value, dim, index)
        self._note(node)
        new = ast.Call(func=ast.Attribute(value=picked, attr="squeeze", ctx=ast.Load()), args=[dim], keywords=[])
        return ast.copy_location(new, node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "roll"):
            return node
        args = list(node.args)
        if isinstance(f.value, ast.Name) and f.value.id == "torch":  # torch.roll(x, shifts, dims)
            if not args:
                return node
            x = args.pop(0)
        else:
            x = f.value
        kw = {k.arg: k.value for k in node.keywords}
        shifts = kw.get("shifts", args[0] if args else None)
        dims = kw.get("dims", args[1] if len(args) > 1 else None)
        if shifts is None or not _int_dim(dims) or not _repeatable(x):
            return node
        found = False

        class _Unwrap(ast.NodeTransformer):
            def visit_Call(inner, c: ast.Call) -> ast.expr:  # `inner`: `self` is the remedy
                nonlocal found
                inner.generic_visit(c)
                element = self._scalar_of_element(c)
                if element is None:
                    return c
                found = True
                return element

        shift = _Unwrap().visit(copy.deepcopy(shifts))
        if not found:
            return node
        size = ast.Call(func=ast.Attribute(value=copy.deepcopy(x), attr="size", ctx=ast.Load()),
                        args=[copy.deepcopy(dims)], keywords=[])
        positions = call("torch.arange", size, device=ast.Attribute(value=copy.deepcopy(x), attr="device",
                                                                    ctx=ast.Load()))
        index = call("torch.remainder", ast.BinOp(left=positions, op=ast.Sub(), right=shift), copy.deepcopy(size))
        self._note(node)
        return ast.copy_location(call("torch.index_select", x, copy.deepcopy(dims), index), node)


def propose_index_ops(fn: object, brk: BreakSite | None = None) -> Proposal:
    """One rewrite of every tensor element used as an index or a roll shift in ``fn`` into index ops.

    With the break's line known, one of the rewritten sites must be on it (else no rewrite).
    """
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    t = _ElementsToIndexOps(_call_assigned(src.tree))
    new_def = t.visit(copy.deepcopy(src.tree))
    if not t.done or not at_break(src, brk, t.lines):
        out.fits = False
        out.notes.append("no tensor element used as a Python index or roll shift at the break")
        return out
    ast.fix_missing_locations(new_def)
    what = "; ".join(f"`{d}`" for d in dict.fromkeys(t.done))
    why = (f"{what} read a tensor element as a Python int (GB0033, a graph break); "
           "index_select keeps the index a tensor and the shapes static")
    out.rewrites.append(Rewrite.of(
        src, new_def, "index-select", f"{src.fn.__qualname__}: {what} -> torch.index_select", why))
    return out
