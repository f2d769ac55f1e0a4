"""Remedy: a loop over a tensor whose values Python already knows iterates a ``range``.

``idx = torch.arange(n) + offset`` then ``for i in idx: i = i.item()`` builds a tensor from
Python numbers only to read them back one by one; each ``.item()`` is a data-dependent read
that breaks the graph (GB0124), and a break inside a loop makes Dynamo run the whole frame
eagerly (Moshi's depth decoder). The loop becomes ``for i in range(offset, n + offset)`` with the
``.item()`` calls dropped; the tensor itself stays for its other uses. Where ``n`` or ``offset``
turns out to be a tensor, the rewrite changes nothing Dynamo sees and is not kept.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin, call

__all__ = ["propose_known_values"]

_ARANGE_KEYS = ("start", "end", "step")


def propose_known_values(fn: object, brk: BreakSite | None = None) -> Proposal:
    """``for i in <torch.arange(...) [+ c]>: ... i.item() ...`` -> ``for i in range(...)``."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    line = src.local_line(brk.line)
    for loop in [n for n in ast.walk(src.tree) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)]:
        if line is not None and not (loop.lineno <= line <= (loop.end_lineno or loop.lineno)):
            continue
        var = loop.target.id  # type: ignore[attr-defined]
        if not isinstance(loop.iter, ast.Name) or not _reads_item(loop.body, var):
            continue
        bounds = _arange_bounds(src.tree, loop.iter.id)
        if bounds is None:
            continue
        new_def = copy.deepcopy(src.tree)
        new_loop = next(n for n in ast.walk(new_def) if isinstance(n, ast.For) and n.lineno == loop.lineno)
        new_loop.iter = call("range", *bounds)
        new_loop.body = [s for s in (_DropItem(var).visit(s) for s in new_loop.body) if not _self_assign(s, var)] \
            or [ast.Pass()]
        ast.fix_missing_locations(new_def)
        what = f"`for {var} in {loop.iter.id}` ({loop.iter.id} = {_assigned_text(src.tree, loop.iter.id)})"
        why = (f"{var}.item() in {what} broke the graph (GB0124); the values are Python's own, "
               f"so the loop iterates range({', '.join(ast.unparse(b) for b in bounds)})")
        out.rewrites.append(Rewrite.of(src, new_def, "loop-range", f"{src.fn.__qualname__}: {what} -> range", why))
    return out


def _reads_item(body: list[ast.stmt], var: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "item"
               and isinstance(n.func.value, ast.Name) and n.func.value.id == var and not n.args
               for s in body for n in ast.walk(s))


def _assignments(tree: ast.FunctionDef, name: str) -> list[ast.AST]:
    """Every statement that binds or changes ``name`` (an in-place method or item write included)."""
    out: list[ast.AST] = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                for leaf in ast.walk(t):
                    if isinstance(leaf, ast.Name) and leaf.id == name:
                        out.append(n)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            out.append(n)
    return out


def _assigned_text(tree: ast.FunctionDef, name: str) -> str:
    node = _assignments(tree, name)[0]
    return ast.unparse(node.value)  # type: ignore[attr-defined]


def _arange_bounds(tree: ast.FunctionDef, name: str) -> list[ast.expr] | None:
    """``range``'s arguments for ``name``'s one assignment ``torch.arange(...) [+ c]``, else None."""
    binds = _assignments(tree, name)
    if len(binds) != 1 or not isinstance(binds[0], ast.Assign) or len(binds[0].targets) != 1 \
            or not isinstance(binds[0].targets[0], ast.Name):
        return None
    value, offset = binds[0].value, None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        value, offset = (value.left, value.right) if _is_arange(value.left) else (value.right, value.left)
    if not _is_arange(value):
        return None
    assert isinstance(value, ast.Call)
    given = dict(zip(_ARANGE_KEYS[:len(value.args)] if len(value.args) > 1 else ("end",), value.args, strict=False))
    for k in value.keywords:
        if k.arg in _ARANGE_KEYS:
            given[k.arg] = k.value
        elif k.arg not in ("device", "requires_grad", "pin_memory", "layout"):
            return None  # a dtype may make the values floats
    if "end" not in given or (isinstance(offset, ast.Call) and _is_arange(offset)):
        return None
    start: ast.expr = given.get("start", ast.Constant(value=0))
    end = given["end"]
    if offset is not None:
        start, end = ast.BinOp(left=start, op=ast.Add(), right=offset), ast.BinOp(left=end, op=ast.Add(), right=offset)
    return [start, end, *([given["step"]] if "step" in given else [])]


def _is_arange(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "arange" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"


def _self_assign(stmt: ast.stmt, var: str) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and stmt.targets[0].id == var and isinstance(stmt.value, ast.Name) and stmt.value.id == var


class _DropItem(ast.NodeTransformer):
    """``var.item()`` -> ``var`` (a Python int already)."""

    def __init__(self, var: str) -> None:
        self.var = var

    def visit_Call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "item" and not node.args and isinstance(f.value, ast.Name) \
                and f.value.id == self.var:
            return ast.copy_location(ast.Name(id=self.var, ctx=ast.Load()), node)
        return self.generic_visit(node)
