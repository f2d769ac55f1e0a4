"""Remedy: a masked write guarded by a test that the mask selects anything runs unguarded.

``if (mask == 0).sum() != 0: mask[mask == 0] = 1`` (VisualBERT's "avoid divide by zero"), or
``if pad_mask.any(): ll.masked_fill_(pad_mask, 0.0)`` (RAG's loss), asks Python whether the mask
selects anything (GB0170), but a masked write that selects nothing writes nothing: without the
guard the write does the same on every input, in the graph. Each write must select with the guard's own mask (the same expression), so the guard is exactly "this write does
something". Diagnostics in the guard (``logger.warning(...)``, ``warnings.warn``, ``print``) keep
their guard, first, and run only eagerly (``not torch.compiler.is_compiling()``): compiled code
does not log them. The guard's mask is tested before the writes, as it was.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Rewrite,
    begin,
    call,
    function_locals,
    pure_expr,
)
from nstviz.advisor.rewrites._source import FunctionSource
from nstviz.advisor.rewrites.logging_calls import LOGGER_METHODS

__all__ = ["propose_guarded_write"]


def _guard_mask(test: ast.expr) -> ast.expr | None:
    """The mask ``E`` of a test that it selects anything: ``E.any()``, ``torch.any(E)``, ``E.sum() != 0``, ``> 0``, ``>= 1``."""
    if isinstance(test, ast.Call) and not test.keywords:
        f = test.func
        if isinstance(f, ast.Attribute) and f.attr == "any" and not test.args:
            return f.value
        if isinstance(f, ast.Attribute) and f.attr == "any" and isinstance(f.value, ast.Name) and f.value.id == "torch" \
                and len(test.args) == 1:
            return test.args[0]
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        op, bound, left = test.ops[0], test.comparators[0].value, test.left
        selects_any = (isinstance(op, (ast.NotEq, ast.Gt)) and bound == 0) or (isinstance(op, ast.GtE) and bound == 1)
        if selects_any and isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) \
                and left.func.attr in ("sum", "count_nonzero") and not left.args and not left.keywords:
            return left.func.value
    return None


def _diagnostic(s: ast.stmt) -> bool:
    """``logger.warning(...)``, ``warnings.warn(...)``, ``print(...)`` as a statement."""
    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
        return False
    f = s.value.func
    return (isinstance(f, ast.Attribute) and f.attr in LOGGER_METHODS) or (isinstance(f, ast.Name) and f.id == "print")


def _masked_fill(s: ast.stmt, mask: ast.expr, src: FunctionSource, local: set[str]) -> bool:
    """``x.masked_fill_(<mask>, v)``, or ``x = x.masked_fill(<mask>, v)``, with the guard's own mask and a pure value."""
    if isinstance(s, ast.Expr):
        c, method, target = s.value, "masked_fill_", None
    elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
        c, method, target = s.value, "masked_fill", s.targets[0].id
    else:
        return False
    if not (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == method
            and isinstance(c.func.value, ast.Name) and len(c.args) == 2 and not c.keywords):
        return False
    return ((target is None or c.func.value.id == target) and ast.dump(c.args[0]) == ast.dump(mask)
            and pure_expr(c.args[1], src, local) and pure_expr(mask, src, local))


def _masked_write(s: ast.stmt, mask: ast.expr, src: FunctionSource, local: set[str]) -> bool:
    """``x[<mask>] = v`` (or ``x[<mask>] op= v``, ``x.masked_fill_(<mask>, v)``) with the guard's own mask and a pure value."""
    if _masked_fill(s, mask, src, local):
        return True
    if isinstance(s, ast.Assign) and len(s.targets) == 1:
        target, value = s.targets[0], s.value
    elif isinstance(s, ast.AugAssign):
        target, value = s.target, s.value
    else:
        return False
    return (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and ast.dump(target.slice) == ast.dump(mask) and pure_expr(value, src, local) and pure_expr(mask, src, local))


class _Unguard(ast.NodeTransformer):
    def __init__(self, src: FunctionSource, local: set[str]) -> None:
        self.src, self.local = src, local
        self.done: list[str] = []
        self.lines: list[tuple[int, int]] = []

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        mask = _guard_mask(node.test)
        if node.orelse or mask is None:
            return node
        writes = [s for s in node.body if _masked_write(s, mask, self.src, self.local)]
        notes = [s for s in node.body if _diagnostic(s)]
        if not writes or len(writes) + len(notes) != len(node.body):
            return node
        self.done.append(ast.unparse(node.test))
        self.lines.append((node.lineno, node.end_lineno or node.lineno))  # the guard, or a call in it, breaks
        out: list[ast.stmt] = []
        if notes:  # told only eagerly, before the writes (the guard reads the mask as it was)
            eager = ast.UnaryOp(op=ast.Not(), operand=call("torch.compiler.is_compiling"))
            out.append(ast.If(test=ast.BoolOp(op=ast.And(), values=[eager, copy.deepcopy(node.test)]), body=notes, orelse=[]))
        return out + writes


def propose_guarded_write(fn: object, brk: BreakSite | None = None) -> Proposal:
    """One rewrite of ``fn``: its masked writes guarded by "the mask selects anything" run unguarded."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    t = _Unguard(src, function_locals(src.tree))
    new_def = t.visit(copy.deepcopy(src.tree))
    line = src.local_line(brk.line)
    if not t.done or (line is not None and not any(a <= line <= b for a, b in t.lines)):
        out.fits = False
        return out
    ast.fix_missing_locations(new_def)
    what = "; ".join(f"`if {d}`" for d in t.done)
    why = (f"the data-dependent guard {what} broke the graph (GB0170); the masked writes it guards write nothing "
           "when their mask selects nothing, so they run unguarded (diagnostics in it run only eagerly)")
    out.rewrites.append(Rewrite.of(src, new_def, "guarded-write", f"{src.fn.__qualname__}: {what} dropped", why))
    return out
