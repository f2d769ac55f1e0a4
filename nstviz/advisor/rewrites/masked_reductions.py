"""Remedy: a reduction over boolean-mask selections becomes a masked reduction (``masked-reduce``).

Losses often keep the valid entries and reduce them::

    valid = (target > 0).detach()
    diff = torch.log(target[valid]) - torch.log(pred[valid])
    loss = torch.sqrt(torch.pow(diff, 2).mean() - 0.5 * torch.pow(diff.mean(), 2))

``target[valid]`` has a length only the data gives (GB0036, "Dynamic shape operator"), so Dynamo
breaks the graph there. Nothing needs that length except the means, and a mean over the selected
entries is a sum over every entry with the others zeroed, divided by the count of the mask::

    keep = valid.reshape(valid.shape + (1,) * (target.dim() - valid.dim()))
    diff = torch.log(torch.where(keep, target, 1)) - torch.log(torch.where(keep, pred, 1))
    loss = torch.sqrt(torch.where(keep, torch.pow(diff, 2), 0).sum() / keep.expand_as(...).sum() - ...)

All shapes are static. The entries not kept are computed on 1 (in the domain of ``log``, ``sqrt``
and division) and then zeroed by ``torch.where``, so neither they nor their gradients reach the
result. It applies when every use of a selection (and of each local computed from it) is inside
element-wise arithmetic that ends in ``.mean()`` or ``.sum()`` over all elements, and every
selection in the function uses one mask; anything else is left as it is. Checked against eager,
gradients included, like every rewrite.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Rewrite,
    at_break,
    begin,
    fresh_name,
    function_locals,
)

__all__ = ["propose_masked_reduce"]

_ELEMENTWISE = {
    "log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "rsqrt", "abs", "pow", "square", "neg", "sigmoid",
    "tanh", "relu", "clamp", "clamp_min", "clamp_max", "float", "double", "detach", "sin", "cos", "atan",
    "reciprocal", "sign", "softplus", "mul", "div", "add", "sub", "smooth_l1_loss", "l1_loss", "mse_loss",
}
_REDUCE = {"mean", "sum"}


def _mask_of(node: ast.AST) -> tuple[str, str] | None:
    """``x[m]`` (a load, ``x`` a plain name or attribute, ``m`` a name) -> (unparsed x, m)."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Name)):
        return None
    base = node.value
    while isinstance(base, ast.Attribute):
        base = base.value
    return (ast.unparse(node.value), node.slice.id) if isinstance(base, ast.Name) else None


def _func_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _reduction(node: ast.AST) -> ast.expr | None:
    """``e.mean()`` / ``e.sum()`` / ``torch.mean(e)`` over every element -> ``e``."""
    if not isinstance(node, ast.Call) or node.keywords or _func_name(node) not in _REDUCE:
        return None
    f = node.func
    if isinstance(f, ast.Attribute) and ast.unparse(f.value) == "torch" and len(node.args) == 1:
        return node.args[0]
    if isinstance(f, ast.Attribute) and not node.args and ast.unparse(f.value) != "torch":
        return f.value
    return None


def _elementwise(node: ast.expr, masked: set[str], mask: str) -> bool:
    """``node`` combines masked values element-wise only (arithmetic, ``log``, ``pow``, constants, other tensors)."""
    if isinstance(node, ast.BinOp):
        return _elementwise(node.left, masked, mask) and _elementwise(node.right, masked, mask)
    if isinstance(node, ast.UnaryOp):
        return _elementwise(node.operand, masked, mask)
    if isinstance(node, ast.Call):
        if _func_name(node) not in _ELEMENTWISE or any(k.arg in {"dim", "reduction"} for k in node.keywords):
            return False
        f = node.func
        parts = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(f, ast.Attribute) and ast.unparse(f.value) not in {"torch", "F", "torch.nn.functional"}:
            parts.append(f.value)  # a method: its receiver is an operand too
        return all(_elementwise(p, masked, mask) for p in parts)
    sel = _mask_of(node)
    if sel is not None:
        return sel[1] == mask
    if isinstance(node, ast.Name):
        return node.id != mask
    return isinstance(node, (ast.Constant, ast.Attribute))


def _uses_masked(node: ast.AST, masked: set[str], mask: str) -> bool:
    return any((_mask_of(n) or ("", ""))[1] == mask or (isinstance(n, ast.Name) and n.id in masked
                                                         and isinstance(n.ctx, ast.Load)) for n in ast.walk(node))


def _plan(tree: ast.FunctionDef, mask: str) -> tuple[set[str], list[ast.expr], str] | None:
    """The locals computed from selections by ``mask``, the reductions over them, the first selected tensor."""
    masked: set[str] = set()
    first = next((sel[0] for n in ast.walk(tree) if (sel := _mask_of(n)) and sel[1] == mask), None)
    if first is None:
        return None
    assigns = [s for s in ast.walk(tree) if isinstance(s, ast.Assign)]
    for s in sorted(assigns, key=lambda s: s.lineno):  # locals made of selections, element-wise
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and _uses_masked(s.value, masked, mask) \
                and _reduction(s.value) is None and _elementwise(s.value, masked, mask):
            masked.add(s.targets[0].id)
    reductions: list[ast.expr] = []
    covered: set[int] = set()
    for node in ast.walk(tree):
        inner = _reduction(node)
        if inner is not None and _uses_masked(inner, masked, mask):
            if not _elementwise(inner, masked, mask):
                return None
            reductions.append(node)  # type: ignore[arg-type]
            covered |= {id(n) for n in ast.walk(inner)}
    defined = {id(n) for s in assigns if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
               and s.targets[0].id in masked for n in ast.walk(s.value)}
    for node in ast.walk(tree):  # every other use of a selection or a masked local: not ours
        hit = (_mask_of(node) or ("", ""))[1] == mask or (isinstance(node, ast.Name) and node.id in masked
                                                         and isinstance(node.ctx, ast.Load))
        if hit and id(node) not in covered and id(node) not in defined:
            return None
    return (masked, reductions, first) if reductions else None


class _Masked(ast.NodeTransformer):
    """Selections -> ``torch.where(keep, x, 1)``; reductions -> masked sums over the count."""

    def __init__(self, mask: str, keep: str, reductions: list[str]) -> None:
        self.mask, self.keep, self.reductions = mask, keep, set(reductions)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        sel = _mask_of(node)
        if sel is None or sel[1] != self.mask:
            return node
        return ast.copy_location(ast.parse(f"torch.where({self.keep}, {sel[0]}, 1)", mode="eval").body, node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        key = ast.unparse(node)
        self.generic_visit(node)
        if key not in self.reductions:
            return node
        inner = ast.unparse(_reduction(node))  # type: ignore[arg-type]
        total = f"torch.where({self.keep}, {inner}, 0).sum()"
        text = total if _func_name(node) == "sum" else f"({total} / {self.keep}.expand_as({inner}).sum())"
        return ast.copy_location(ast.parse(text, mode="eval").body, node)


def _insert_keep(tree: ast.FunctionDef, mask: str, keep: str, first: str) -> bool:
    """``keep = mask`` broadcast to the first selected tensor's rank, right after ``mask`` is assigned."""
    line = f"{keep} = {mask}.reshape({mask}.shape + (1,) * ({first}.dim() - {mask}.dim()))"
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, s in enumerate(body):
            if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == mask for t in s.targets):
                body.insert(i + 1, ast.parse(line).body[0])
                return True
    args = tree.args
    if mask in {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}:
        tree.body.insert(0, ast.parse(line).body[0])
        return True
    return False


def propose_masked_reduce(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Means and sums over ``x[mask]`` selections as masked sums over every entry, divided by the count."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    masks = list(dict.fromkeys(sel[1] for n in ast.walk(src.tree) if (sel := _mask_of(n))))
    spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(src.tree) if _mask_of(n)]
    found = [(m, p) for m in masks if (p := _plan(src.tree, m)) is not None]
    if len(found) != 1 or len(masks) != 1 or not at_break(src, brk, spans):
        out.fits = False
        out.notes.append("no selection by one boolean mask, reduced only by means and sums, at the break")
        return out
    mask, (_, reductions, first) = found[0]
    new_def = copy.deepcopy(src.tree)
    keep = fresh_name("keep", function_locals(new_def))
    new_def = _Masked(mask, keep, [ast.unparse(r) for r in reductions]).visit(new_def)
    if not _insert_keep(new_def, mask, keep, first):
        out.fits = False
        out.notes.append(f"the mask `{mask}` is not assigned in the function or given as an argument")
        return out
    ast.fix_missing_locations(new_def)
    why = (f"selections by `{mask}` have a length only the data gives (a graph break); the means and sums over them "
           "are masked sums over every entry divided by the mask's count, with static shapes (the entries not kept "
           "are computed on 1 and zeroed, so no NaN reaches the result or its gradient)")
    what = f"reductions over `x[{mask}]` -> masked sums"
    out.rewrites.append(Rewrite.of(src, new_def, "masked-reduce", f"{src.fn.__qualname__}: {what}", why))
    return out
