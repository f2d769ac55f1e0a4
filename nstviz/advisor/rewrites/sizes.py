"""Remedy: an early return on a data-dependent size becomes ``torch.cond`` (``size-cond``).

After ``nonzero`` or a boolean mask (``keypoints[mask]``) the number of rows is known only at
run time. ``capture_dynamic_output_shape_ops`` lets Dynamo trace the op (an unbacked size ``u0``
instead of GB0036), but the next Python test on that size, such as SuperPoint's
``if k >= len(keypoints): return keypoints, scores``, cannot be decided while tracing: "Could not
guard on data-dependent expression", a graph break again. No ``torch._check`` hint is true there
(the size really is on either side of ``k``), so the test has to stay a test, in the graph:

    if <size test>: return A          def _nstviz_small(): return A
    ...; return B              ->     def _nstviz_large(): ...; return B
                                      return torch.cond(<size test>, _nstviz_small, _nstviz_large, ())

The branches are closures (no operands); names a branch assigns are renamed so it reads the
function's values, and an output that is an input unchanged is cloned (``torch.cond`` refuses
aliases). ``torch.topk(x, k)`` in a branch gets ``k`` clamped to ``x``'s size with
``torch.sym_min``: the clamp changes nothing where the branch runs, but torch asserts topk's
``k <= size`` for the whole graph, also when the other branch is taken (measured: "Runtime
assertion failed for expression u0 >= 4"). Both branches must be side-effect free tensor code.
"""

from __future__ import annotations

import ast
import copy

from nstviz.advisor.rewrites._core import (
    BreakSite,
    Proposal,
    Renamer,
    Rewrite,
    assigned_names,
    begin,
    call,
    function_locals,
    pure_block,
    pure_expr,
)
from nstviz.advisor.rewrites._source import FunctionSource

__all__ = ["propose_size_branch", "with_dynamic_shapes"]

_CONFIG = {"capture_dynamic_output_shape_ops": True}


def _early_returns(src: FunctionSource, line: int | None) -> list[tuple[list[ast.stmt], int, ast.If]]:
    """``(block, index, if)``: ``if <test>: ...; return`` with no ``else``, the block ending in a ``return``."""
    found = []
    for node in ast.walk(src.tree):
        block = getattr(node, "body", None)
        if not isinstance(block, list):
            continue
        for i, s in enumerate(block):
            if not (isinstance(s, ast.If) and not s.orelse and isinstance(s.body[-1], ast.Return)):
                continue
            if line is not None and not s.test.lineno <= line <= (s.test.end_lineno or s.lineno):
                continue
            if i + 1 < len(block) and isinstance(block[-1], ast.Return):
                found.append((block, i, s))
    return found


def _size_test(test: ast.expr) -> bool:
    """A comparison that reads a size (``len(x)``, ``x.shape[0]``, ``x.size(0)``) and calls nothing else."""
    sizes = 0
    for n in ast.walk(test):
        if isinstance(n, ast.Call):
            f = n.func
            if (isinstance(f, ast.Name) and f.id == "len") or (isinstance(f, ast.Attribute) and f.attr == "size"):
                sizes += 1
            else:
                return False
        elif isinstance(n, ast.Attribute) and n.attr == "shape":
            sizes += 1
    return isinstance(test, ast.Compare) and sizes > 0


def _clamped_topk(node: ast.AST) -> ast.AST:
    """``torch.topk(x, k, ...)`` / ``x.topk(k, ...)`` with ``k`` -> ``torch.sym_min(k, x.shape[dim])``."""

    class _Clamp(ast.NodeTransformer):
        def visit_Call(self, c: ast.Call) -> ast.Call:
            self.generic_visit(c)
            f = c.func
            if not (isinstance(f, ast.Attribute) and f.attr == "topk"):
                return c
            method = not (isinstance(f.value, ast.Name) and f.value.id == "torch")
            args = c.args if method else c.args[1:]
            x = f.value if method else (c.args[0] if c.args else None)
            kw = {k.arg: k for k in c.keywords}
            if not isinstance(x, ast.Name) or (not args and "k" not in kw):
                return c
            dims = [*args[2:3], *(k.value for k in c.keywords if k.arg == "dim")]
            dim = dims[0] if dims else ast.Constant(-1)
            size = ast.Subscript(value=ast.Attribute(value=copy.deepcopy(x), attr="shape", ctx=ast.Load()),
                                 slice=copy.deepcopy(dim), ctx=ast.Load())
            if args:
                args[0] = call("torch.sym_min", args[0], size)
                c.args = args if method else [c.args[0], *args]
            else:
                kw["k"].value = call("torch.sym_min", kw["k"].value, size)
            return c

    return _Clamp().visit(node)


def _branch(name: str, stmts: list[ast.stmt], pick: int | None) -> ast.FunctionDef:
    """A closure running ``stmts``: names it assigns renamed (``n`` -> ``n__name``), aliased outputs cloned.

    ``pick``: return only that element of the returned tuple.
    """
    mapping: dict[str, str] = {}
    body: list[ast.stmt] = []
    for s in copy.deepcopy(stmts):
        s = _clamped_topk(s)  # type: ignore[assignment]
        if isinstance(s, ast.Assign):
            s.value = Renamer(dict(mapping)).visit(s.value)
            mapping.update({n: f"{n}__{name}" for n in assigned_names([s])})
            s.targets = [Renamer(mapping).visit(s.targets[0])]
        elif isinstance(s, ast.Return) and s.value is not None:
            value = Renamer(dict(mapping)).visit(s.value)
            parts = value.elts if isinstance(value, ast.Tuple) else [value]
            # an input returned unchanged aliases it: torch.cond wants new tensors
            parts = [call(f"{p.id}.clone") if isinstance(p, ast.Name) and p.id not in mapping.values() else p
                     for p in parts]
            s.value = parts[pick] if pick is not None else \
                ast.Tuple(elts=parts, ctx=ast.Load()) if isinstance(value, ast.Tuple) else parts[0]
        body.append(s)
    return ast.FunctionDef(name=f"_nstviz_{name}" + ("" if pick is None else f"_{pick}"), args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                           kw_defaults=[], defaults=[]), body=body, decorator_list=[], returns=None, type_params=[])


def propose_size_branch(fn: object, brk: BreakSite | None = None) -> Proposal:
    """``if <size test>: return A`` followed by ``...; return B`` at the break -> ``torch.cond``."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    local = function_locals(src.tree)
    for block, idx, node in _early_returns(src, src.local_line(brk.line)):
        if not _size_test(node.test):
            continue  # a test on tensor values is branches.py's
        tail = block[idx + 1:]
        if not (pure_block(node.body, src, local) and pure_block(tail, src, local) and pure_expr(node.test, src, local)):
            out.notes.append(f"`if {ast.unparse(node.test)}`: a branch is not side-effect free tensor code; not rewritten")
            continue
        new_def = copy.deepcopy(src.tree)
        new_block = _same_block(new_def, src.tree, block)
        new_block[idx:] = _cond_return(node.test, node.body, tail)
        test = ast.unparse(node.test)
        why = (f"`if {test}` tests a size only known at run time (after nonzero or a boolean mask): Dynamo cannot "
               "guard on it; torch.cond keeps both sides in the graph (with capture_dynamic_output_shape_ops)")
        out.rewrites.append(with_dynamic_shapes(src, new_def, "size-cond", f"early return `if {test}` -> torch.cond", why))
    if not out.rewrites and not out.notes:
        out.fits = False
        out.notes.append("no early return on a size test at the break")
    return out


def with_dynamic_shapes(src: FunctionSource, new_def: ast.FunctionDef, remedy: str, what: str, why: str) -> Rewrite:
    """The rewrite ``new_def`` of ``src``, with ``capture_dynamic_output_shape_ops`` (set, and in the pasted code)."""
    ast.fix_missing_locations(new_def)
    config_line = "torch._dynamo.config.capture_dynamic_output_shape_ops = True  # set once, before compiling\n"
    return Rewrite.of(
        src, new_def, remedy, f"{src.fn.__qualname__}: {what}, with capture_dynamic_output_shape_ops=True",
        why, before=config_line, config=dict(_CONFIG))


def _cond_return(test: ast.expr, small: list[ast.stmt], large: list[ast.stmt]) -> list[ast.stmt]:
    """The branches as closures and ``return torch.cond(...)``: one cond per element of a returned tuple.

    One cond per output: torch 2.13's cond cannot differentiate a cond whose outputs mix integer
    tensors (keypoints) and ones that need a gradient (scores), measured ("outs_to_grad length (1)
    != tangents length (2)"); each output alone compiles.
    """
    width = len(small[-1].value.elts) if isinstance(small[-1].value, ast.Tuple) else 0  # type: ignore[attr-defined]
    if width != (len(large[-1].value.elts) if isinstance(large[-1].value, ast.Tuple) else 0):  # type: ignore[attr-defined]
        width = 0
    picks: list[int | None] = list(range(width)) if width else [None]
    out: list[ast.stmt] = []
    conds: list[ast.expr] = []
    for pick in picks:
        t, f = _branch("small", small, pick), _branch("large", large, pick)
        out += [t, f]
        conds.append(call("torch.cond", copy.deepcopy(test), ast.Name(id=t.name, ctx=ast.Load()),
                          ast.Name(id=f.name, ctx=ast.Load()), ast.Tuple(elts=[], ctx=ast.Load())))
    out.append(ast.Return(value=ast.Tuple(elts=conds, ctx=ast.Load()) if width else conds[0]))
    return out


def _same_block(new_def: ast.FunctionDef, old_def: ast.FunctionDef, block: list[ast.stmt]) -> list[ast.stmt]:
    """In a deep copy of ``old_def``, the ``body`` that is ``block`` in the original (same walk order)."""
    owner = next(i for i, n in enumerate(ast.walk(old_def)) if getattr(n, "body", None) is block)
    return next(n for i, n in enumerate(ast.walk(new_def)) if i == owner).body  # type: ignore[attr-defined]
