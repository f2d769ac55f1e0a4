"""Remedy: a boolean chain tests what Python already knows before a data-dependent size (``static-first``).

transformers' SDPA wrapper decides ``is_causal = q_length > 1 and attention_mask is None and is_causal``.
When ``q_length`` is a size known only at run time (``u0``: the query of one segment after a
``split`` on a ``.tolist()``, a boolean-mask selection), ``q_length > 1`` is a guard Dynamo cannot
decide while tracing ("Could not guard on data-dependent expression u0 > 1"): the frame breaks, or
falls back to eager under ``capture_scalar_outputs``. An encoder's attention passes
``is_causal=False``: the chain is False whatever ``q_length`` is, and testing the flag first never
reaches the size::

    is_causal = q_length > 1 and attention_mask is None and is_causal
        ->  is_causal = bool(is_causal and attention_mask is None and q_length > 1)

Operands Python decides while tracing (names, attributes, constants, ``is None`` tests, ``not`` of
those) move first, the others keep their order after them. The chain's value is wrapped in
``bool`` where it is not an ``if``/``while``/``assert`` test: with its operands in another order,
``and`` could return another falsy operand. Only a chain on the break's line, with a comparison
before a Python-known operand, is rewritten; the flag whose run showed the break (``BreakSite.flags``)
is the rewrite's config. Checked like every rewrite: kept only for fewer graphs and outputs equal
to eager on other input sets.
"""

from __future__ import annotations

import ast
import copy
import re

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin, static_test

__all__ = ["propose_static_first"]

_GUARD = "data-dependent expression"
_EXPRESSION = re.compile(r"data-dependent expression (.+?) \(unhinted")
_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


def _decided(node: ast.expr) -> bool:
    """Whether Python decides ``node`` while tracing: a name, attribute, constant, ``is`` test, ``not`` of one."""
    return static_test(node, flags=True)


def _reordered(chain: ast.BoolOp) -> list[ast.expr] | None:
    """The chain's operands with the Python-decided ones first; None when none comes after another operand."""
    decided = [_decided(v) for v in chain.values]
    first_other = next((i for i, d in enumerate(decided) if not d), None)
    if first_other is None or not any(decided[first_other:]):
        return None
    return [v for v, d in zip(chain.values, decided, strict=True) if d] + [
        v for v, d in zip(chain.values, decided, strict=True) if not d]


def _chains_at(tree: ast.AST, line: int) -> list[tuple[ast.BoolOp, bool]]:
    """``(chain, is a test)`` for each outermost boolean chain spanning ``line`` that :func:`_reordered` changes."""
    tests = {id(n.test) for n in ast.walk(tree) if isinstance(n, _TESTS)}
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.BoolOp) for v in n.values}
    return [(n, id(n) in tests) for n in ast.walk(tree)
            if isinstance(n, ast.BoolOp) and id(n) not in inner
            and n.lineno <= line <= (n.end_lineno or n.lineno) and _reordered(n) is not None]


class _Reorder(ast.NodeTransformer):
    def __init__(self, spots: set[tuple[int, int]], tests: set[tuple[int, int]]) -> None:
        self.spots, self.tests = spots, tests

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        where = (node.lineno, node.col_offset)
        if where not in self.spots:
            return self.generic_visit(node)
        new = ast.BoolOp(op=node.op, values=_reordered(node) or node.values)
        if where in self.tests:
            return ast.copy_location(new, node)
        return ast.copy_location(ast.Call(func=ast.Name(id="bool", ctx=ast.Load()), args=[new], keywords=[]), node)


def propose_static_first(fn: object, brk: BreakSite | None = None) -> Proposal:
    """The chain at a data-dependent guard with its Python-known operands first (``static-first``)."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    line = src.local_line(brk.line)
    chains = _chains_at(src.tree, line) if _GUARD in brk.message and line is not None else []
    if not chains:
        out.fits = False
        out.notes.append("no boolean chain at the break testing a data-dependent size before what Python knows")
        return out
    spots = {(c.lineno, c.col_offset) for c, _ in chains}
    tests = {(c.lineno, c.col_offset) for c, is_test in chains if is_test}
    new_def = ast.fix_missing_locations(_Reorder(spots, tests).visit(copy.deepcopy(src.tree)))
    chain = chains[0][0]
    before, after = ast.unparse(chain), ast.unparse(ast.BoolOp(op=chain.op, values=_reordered(chain) or []))
    flags = ", ".join(f"{f}=True" for f in brk.flags)
    guard = _EXPRESSION.search(brk.message)
    why = (f"`{before}` tests a size known only at run time first: Dynamo cannot guard on "
           f"{guard.group(1) if guard else 'it'} while tracing; the operands Python decides go first, "
           "so the size is only tested when they hold" + (f" (with {flags})" if flags else ""))
    out.rewrites.append(Rewrite.of(
        src, new_def, "static-first", f"{src.fn.__qualname__}: `{after}` first", why,
        config={f: True for f in brk.flags}))
    return out
