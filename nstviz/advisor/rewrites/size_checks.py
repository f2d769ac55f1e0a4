"""Remedy: two sizes equal only by construction get a ``torch._check`` (``size-check``).

Two ``masked_select`` s (or ``nonzero`` s, or boolean masks) of one mask give tensors of the same
length, but each length is its own unbacked size (``u0``, ``u1``). An op that needs them equal,
``binary_cross_entropy_with_logits(inputs, targets)`` in a detection loss, guards ``Eq(u1, u0)``,
which Dynamo cannot decide while tracing: "Could not guard on data-dependent expression", a graph
break. Nothing about the data is unknown there, only the equality: ``torch._check(a.shape ==
b.shape)`` just before the call tells the shape environment (and asserts it at run time)::

    ce = F.binary_cross_entropy_with_logits(inputs, targets)   ->   torch._check(inputs.shape == targets.shape)
                                                                    ce = F.binary_cross_entropy_with_logits(...)

The check is put on the first two names the breaking call takes. When they are not tensors, or
their shapes really differ (broadcasting), the rewrite raises on the input sets and is not kept.
"""

from __future__ import annotations

import ast
import copy
import re

from nstviz.advisor.rewrites._core import BreakSite, Proposal, begin
from nstviz.advisor.rewrites.sizes import with_dynamic_shapes

__all__ = ["propose_size_check"]

_EQUAL_UNBACKED = re.compile(r"data-dependent expression Eq\((u\d+), (u\d+)\)")


def _statement_at(tree: ast.FunctionDef, line: int) -> tuple[list[ast.stmt], int] | None:
    """``(block, index)`` of the simple statement (not an ``if``/loop/``def``) spanning ``line``."""
    for node in ast.walk(tree):
        block = getattr(node, "body", None)
        for body in (block, getattr(node, "orelse", None)):
            if not isinstance(body, list):
                continue
            for i, s in enumerate(body):
                if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)) and \
                        s.lineno <= line <= (s.end_lineno or s.lineno):
                    return body, i
    return None


def _two_names(stmt: ast.stmt) -> tuple[str, str] | None:
    """The first two distinct plain names the first call of ``stmt`` that takes two of them is given."""
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        names = [a.id for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name)]
        names = list(dict.fromkeys(n for n in names if n not in {"None", "True", "False"}))
        if len(names) >= 2:
            return names[0], names[1]
    return None


def propose_size_check(fn: object, brk: BreakSite | None = None) -> Proposal:
    """``torch._check(a.shape == b.shape)`` before the call that guards on two equal unbacked sizes."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    found = _EQUAL_UNBACKED.search(brk.message)
    line = src.local_line(brk.line)
    at = _statement_at(src.tree, line) if found and line is not None else None
    names = _two_names(at[0][at[1]]) if at is not None else None
    if found is None or at is None or names is None:
        out.fits = False
        out.notes.append("no call at the break guarding on two equal data-dependent sizes")
        return out
    a, b = names
    new_def = copy.deepcopy(src.tree)
    new_at = _statement_at(new_def, line)
    assert new_at is not None  # the same tree, copied
    block, i = new_at
    block.insert(i, ast.parse(f"torch._check({a}.shape == {b}.shape)").body[0])
    u1, u0 = found.groups()
    why = (f"`{a}` and `{b}` have sizes only known at run time ({u1}, {u0}: after nonzero, a mask or masked_select) "
           f"that the call needs equal; Dynamo cannot guard on Eq({u1}, {u0}), torch._check says it "
           "(and asserts it at run time), with capture_dynamic_output_shape_ops")
    what = f"torch._check({a}.shape == {b}.shape) before the call at the break"
    out.rewrites.append(with_dynamic_shapes(src, new_def, "size-check", what, why))
    return out
