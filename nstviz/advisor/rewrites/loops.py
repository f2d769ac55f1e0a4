"""Remedy 3: a comprehension over a tensor, stacked, becomes tensor ops where the rule is sure.

``torch.stack([f(r) for r in t])`` with ``f`` an elementwise expression of ``r`` and constants
becomes ``f(t)``; any other side-effect free tensor body becomes ``torch.vmap(lambda r: f(r))(t)``
(a conditional expression ``a if c else b`` in it becomes ``torch.where(c, a, b)``). When the
break is about iterating itself (GB4347 "Missing tp_iternext", GB9493 "C-implemented special
method"), ``for r in t`` becomes ``for r in t.unbind(0)``.
"""

from __future__ import annotations

import ast
import copy

import torch

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Renamer,
    Rewrite,
    begin,
    call,
    function_locals,
    pure_expr,
    resolve,
    tensor_bool,
)
from nstviz.advisor.rewrites._source import FunctionSource

__all__ = ["ELEMENTWISE", "propose_loop"]

ELEMENTWISE = {
    "sin", "cos", "tan", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "abs", "neg",
    "relu", "sigmoid", "tanh", "gelu", "silu", "erf", "floor", "ceil", "round", "trunc", "sign", "clamp", "clip",
    "pow", "square", "reciprocal", "float", "half", "double", "bfloat16", "mul", "add", "sub", "div", "maximum",
    "minimum", "logical_not", "bitwise_not",
}
_ITER_BREAK = ("tp_iternext", "C-implemented special method", "GB4347", "GB9493")


def _elementwise(elt: ast.expr, var: str, src: FunctionSource, local: set[str]) -> bool:
    """Only ``var``, numeric constants and elementwise ops: stacking the rows equals the op on the whole."""
    for n in ast.walk(elt):
        if isinstance(n, ast.Name) and n.id != var:
            if n.id in local:
                return False
            obj = resolve(n, src)
            if not (obj is torch or isinstance(obj, (int, float)) or getattr(obj, "__name__", "") == "torch.nn.functional"):
                return False
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else ""
            if name not in ELEMENTWISE:
                return False
            if isinstance(f, ast.Attribute) and not isinstance(f.value, ast.Name):
                continue
        elif isinstance(n, (ast.Subscript, ast.IfExp, ast.Starred, ast.Tuple, ast.List, ast.Dict)):
            return False
    return True


class _IfToWhere(ast.NodeTransformer):
    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        return call("torch.where", tensor_bool(node.test), node.body, node.orelse)


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, new: ast.expr) -> None:
        self.key = (target.lineno, target.col_offset, target.end_lineno, target.end_col_offset)  # type: ignore[attr-defined]
        self.new = new

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if getattr(node, "lineno", None) is not None and (
            node.lineno, node.col_offset, node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        ) == self.key and isinstance(node, ast.Call):
            return self.new
        return super().generic_visit(node)


def _stack_comprehensions(src: FunctionSource, line: int | None) -> list[tuple[ast.Call, ast.comprehension, ast.expr]]:
    out = []
    for node in ast.walk(src.tree):
        if not (isinstance(node, ast.Call) and node.args and resolve(node.func, src) is torch.stack):
            continue
        if line is not None and not (node.lineno <= line <= (node.end_lineno or node.lineno)):
            continue
        comp = node.args[0]
        dim_ok = len(node.args) == 1 and all(
            k.arg == "dim" and isinstance(k.value, ast.Constant) and k.value.value == 0 for k in node.keywords
        )
        if isinstance(comp, (ast.ListComp, ast.GeneratorExp)) and len(comp.generators) == 1 and dim_ok:
            gen = comp.generators[0]
            if isinstance(gen.target, ast.Name) and not gen.ifs and not gen.is_async:
                out.append((node, gen, comp.elt))
    return out


def propose_loop(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Vectorised or ``torch.vmap`` forms of ``torch.stack([... for r in t])``; ``t.unbind(0)`` for iteration breaks."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    local = function_locals(src.tree)
    line = src.local_line(brk.line)
    for node, gen, elt in _stack_comprehensions(src, line):
        var = gen.target.id  # type: ignore[attr-defined]
        text = ast.unparse(node)
        if not pure_expr(elt, src, local | {var}) or any(
            isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Store) for n in ast.walk(elt)
        ):
            out.notes.append(f"`{text}`: the body is not side-effect free tensor code; not rewritten")
            continue
        it = copy.deepcopy(gen.iter)
        if _elementwise(elt, var, src, local):
            new: ast.expr = Renamer({}).visit(copy.deepcopy(elt))
            new = _Substitute(var, it).visit(new)
            remedy, how = "loop-vectorise", "the elementwise body applied to the whole tensor"
        else:
            lam = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=var)], kwonlyargs=[], kw_defaults=[],
                                                defaults=[]), body=_IfToWhere().visit(copy.deepcopy(elt)))
            new = ast.Call(func=call("torch.vmap", lam), args=[it], keywords=[])
            remedy, how = "loop-vmap", "torch.vmap over the first dimension"
        out.rewrites.append(_make(src, node, new, remedy, f"`{text}` -> {how}"))
    for new_def, how, remedy in _append_loops(src, line, local, out.notes):
        out.rewrites.append(Rewrite.of(
            src, new_def, remedy, f"{src.fn.__qualname__}: {how}",
            f"a Python loop over a tensor broke the graph; {how}"))
    if any(k in f"{brk.gb_id or ''} {brk.message}" for k in _ITER_BREAK):
        new_def = copy.deepcopy(src.tree)
        changed = False
        for n in ast.walk(new_def):
            gens = [n] if isinstance(n, ast.comprehension) else [n] if isinstance(n, ast.For) else []
            for g in gens:
                if isinstance(g.iter, ast.Name) and g.iter.id in local:
                    g.iter = call(f"{g.iter.id}.unbind", ast.Constant(0))
                    changed = True
        if changed:
            ast.fix_missing_locations(new_def)
            out.rewrites.append(Rewrite.of(
                src, new_def, "loop-unbind", f"{src.fn.__qualname__}: iterate tensors with .unbind(0)",
                "iterating a tensor broke the graph; iterate t.unbind(0) instead"))
    return out


def _append_loops(src: FunctionSource, line: int | None, local: set[str],
                  notes: list[str]) -> list[tuple[ast.FunctionDef, str, str]]:
    """``out = []; for r in t: out.append(e); ... torch.stack(out)`` -> the comprehension's rewrite."""
    found = []
    for node in ast.walk(src.tree):
        block = getattr(node, "body", None)
        if not isinstance(block, list):
            continue
        for i, s in enumerate(block):
            if not (isinstance(s, ast.For) and isinstance(s.target, ast.Name) and len(s.body) == 1 and not s.orelse
                    and i > 0):
                continue
            if line is not None and not (s.lineno <= line <= (s.end_lineno or s.lineno)):
                continue
            init, body = block[i - 1], s.body[0]
            if not (isinstance(init, ast.Assign) and len(init.targets) == 1 and isinstance(init.targets[0], ast.Name)
                    and isinstance(init.value, ast.List) and not init.value.elts):
                continue
            acc = init.targets[0].id
            if not (isinstance(body, ast.Expr) and isinstance(body.value, ast.Call) and len(body.value.args) == 1
                    and isinstance(body.value.func, ast.Attribute) and body.value.func.attr == "append"
                    and isinstance(body.value.func.value, ast.Name) and body.value.func.value.id == acc):
                continue
            uses = [n for st in block[i + 1:] for n in ast.walk(st) if isinstance(n, ast.Name) and n.id == acc]
            stacks = [n for st in block[i + 1:] for n in ast.walk(st) if isinstance(n, ast.Call)
                      and resolve(n.func, src) is torch.stack and len(n.args) == 1 and not n.keywords
                      and isinstance(n.args[0], ast.Name) and n.args[0].id == acc]
            if len(uses) != 1 or len(stacks) != 1:
                notes.append(f"`for {s.target.id} in {ast.unparse(s.iter)}`: {acc} is used other than by one torch.stack")
                continue
            elt, var = body.value.args[0], s.target.id
            if not pure_expr(elt, src, local | {var}):
                notes.append(f"`for {var} in {ast.unparse(s.iter)}`: the body is not side-effect free tensor code")
                continue
            if _elementwise(elt, var, src, local - {var}):
                new: ast.expr = _Substitute(var, s.iter).visit(copy.deepcopy(elt))
                how, remedy = "the elementwise body applied to the whole tensor", "loop-vectorise"
            else:
                lam = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=var)], kwonlyargs=[],
                                                    kw_defaults=[], defaults=[]),
                                 body=_IfToWhere().visit(copy.deepcopy(elt)))
                new = ast.Call(func=call("torch.vmap", lam), args=[copy.deepcopy(s.iter)], keywords=[])
                how, remedy = "torch.vmap over the first dimension", "loop-vmap"
            new_def = copy.deepcopy(src.tree)
            for a, b in zip(ast.walk(src.tree), ast.walk(new_def), strict=True):
                if getattr(a, "body", None) is block:
                    nb = b.body  # type: ignore[attr-defined]
                    for st in nb[i + 1:]:
                        _Replace(stacks[0], new).visit(st)
                    del nb[i - 1:i + 1]
                    break
            ast.fix_missing_locations(new_def)
            found.append((new_def, how, remedy))
    return found


class _Substitute(ast.NodeTransformer):
    def __init__(self, var: str, expr: ast.expr) -> None:
        self.var, self.expr = var, expr

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return copy.deepcopy(self.expr) if node.id == self.var else node


def _make(src: FunctionSource, target: ast.Call, new: ast.expr, remedy: str, how: str) -> Rewrite:
    new_def = _Replace(target, new).visit(copy.deepcopy(src.tree))
    ast.fix_missing_locations(new_def)
    why = f"a Python loop over a tensor ({how.split(' -> ')[0]}) broke the graph; {how.split(' -> ')[1]}"
    return Rewrite.of(src, new_def, remedy, f"{src.fn.__qualname__}: {how}", why)
