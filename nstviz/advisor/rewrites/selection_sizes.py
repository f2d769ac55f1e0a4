"""Remedy: the size of a boolean-mask selection becomes a count of the mask (``mask-count``).

``inputs_embeds[mask].numel() == features.numel()`` checks that a multimodal model has as many
placeholder tokens as features. The selection has a size only known from the data (GB0036,
"Dynamic shape operator"), so Dynamo breaks the graph to build a tensor that is only measured.
The size needs no selection: a boolean mask over ``x``'s leading dimensions selects
``mask.sum()`` rows of ``x.numel() // mask.numel()`` elements each::

    x[mask].numel()   ->   mask.sum() * (x.numel() // mask.numel())

which is a tensor op of static shape. A check that raises on it (``if ... != n: raise``) becomes
``torch._assert_async`` in the same rewrite (see :mod:`.checks`), since a Python ``if`` on the
count would break the graph again; so does a check helper called on it as a statement
(transformers' ``torch_compilable_check(cond, msg)``, whose ``torch._check_tensor_all`` breaks). Checked against eager like every rewrite: where ``mask`` is not
a boolean mask over ``x``'s leading dimensions, the values differ and the rewrite is refused.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, at_break, begin, call, function_locals
from nstviz.advisor.rewrites._source import FunctionSource
from nstviz.advisor.rewrites.checks import _ChecksToAsserts

__all__ = ["propose_mask_count"]


def _plain(node: ast.expr) -> bool:
    """``x`` or ``self.x``: read twice by the rewrite at no cost."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class _SelectionSizes(ast.NodeTransformer):
    def __init__(self) -> None:
        self.done: list[str] = []
        self.lines: list[tuple[int, int]] = []
        self.counts: set[str] = set()  # the count expressions written, as text

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "numel" and not node.args and not node.keywords):
            return node
        sel = f.value
        if not (isinstance(sel, ast.Subscript) and isinstance(sel.ctx, ast.Load) and _plain(sel.value)
                and _plain(sel.slice)):
            return node
        x, mask = sel.value, sel.slice
        self.done.append(ast.unparse(node))
        self.lines.append((node.lineno, node.end_lineno or node.lineno))
        per_row = ast.BinOp(left=call(f"{ast.unparse(x)}.numel"), op=ast.FloorDiv(), right=call(f"{ast.unparse(mask)}.numel"))
        count = ast.BinOp(left=call(f"{ast.unparse(mask)}.sum"), op=ast.Mult(), right=per_row)
        self.counts.add(ast.unparse(count))
        return ast.copy_location(count, node)


class _ChecksOnCounts(_ChecksToAsserts):
    """Only the ``if ...: raise`` checks whose test holds a rewritten count."""

    def __init__(self, src: FunctionSource, local: set[str], counts: set[str]) -> None:
        super().__init__(src, local)
        self.counts = counts

    def visit_If(self, node: ast.If) -> ast.stmt:
        if not any(ast.unparse(n) in self.counts for n in ast.walk(node.test) if isinstance(n, ast.BinOp)):
            self.generic_visit(node)
            return node
        return super().visit_If(node)


class _CheckCallsOnCounts(ast.NodeTransformer):
    """``some_check(<count> == n, msg)`` as a statement -> ``torch._assert_async(<count> == n, "<msg's fixed text>")``.

    transformers' ``torch_compilable_check`` hands a tensor condition to ``torch._check_tensor_all``,
    which breaks the graph again (measured on Gemma 4: the break moved into ``import_utils.py``).
    """

    def __init__(self, counts: set[str]) -> None:
        self.counts = counts
        self.done: list[str] = []

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        c = node.value
        if not (isinstance(c, ast.Call) and c.args and "check" in (ast.unparse(c.func).rsplit(".", 1)[-1])
                and any(ast.unparse(n) in self.counts for n in ast.walk(c.args[0]) if isinstance(n, ast.BinOp))):
            return node
        msg = c.args[1] if len(c.args) > 1 else next((k.value for k in c.keywords if k.arg == "msg"), None)
        if isinstance(msg, ast.Constant) and isinstance(msg.value, str):
            text = msg.value
        elif isinstance(msg, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "..." for v in msg.values)
        else:
            text = f"check failed: {ast.unparse(c.args[0])}"
        self.done.append(ast.unparse(c.func))
        return ast.copy_location(ast.Expr(value=call("torch._assert_async", c.args[0], ast.Constant(text))), node)


def propose_mask_count(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Every ``x[mask].numel()`` of ``fn`` as ``mask.sum() * (x.numel() // mask.numel())``, its checks as asserts."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    sizes = _SelectionSizes()
    new_def = sizes.visit(copy.deepcopy(src.tree))
    if not sizes.done or not at_break(src, brk, sizes.lines):
        out.fits = False
        out.notes.append("no `x[mask].numel()` at the break")
        return out
    ast.fix_missing_locations(new_def)
    checks = _ChecksOnCounts(src, function_locals(new_def), sizes.counts)
    new_def = checks.visit(new_def)
    check_calls = _CheckCallsOnCounts(sizes.counts)
    new_def = check_calls.visit(new_def)
    ast.fix_missing_locations(new_def)
    what = "; ".join(f"`{d}`" for d in sizes.done)
    asserted = f", and `{checks.done[0]}` as torch._assert_async" if checks.done else ""
    asserted += f", and `{check_calls.done[0]}(...)` on it as torch._assert_async" if check_calls.done else ""
    why = (f"{what} measured a boolean-mask selection, whose size only the data gives (a graph break); the count of "
           f"the mask is the same number with static shapes{asserted}")
    out.rewrites.append(Rewrite.of(src, new_def, "mask-count", f"{src.fn.__qualname__}: {what} -> a count of the mask",
                                   why))
    return out
