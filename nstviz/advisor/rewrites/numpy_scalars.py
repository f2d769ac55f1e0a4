"""Numpy on Python numbers becomes ``math``: a pure-Python version Dynamo folds as constants.

``np.lcm(config.a, config.b)`` returns a numpy scalar, which Dynamo traces as an ndarray
(``torch._numpy``); a test on it (``if length % m != 0 and ...``) then breaks the graph
("generic_jump NumpyNdarrayVariable()", e.g. Reformer's ``_get_least_common_mult_chunk_len``).
The same call through ``math`` is a Python int and the test is decided while tracing. Both the
function at the break and the module-level helpers it calls are looked at; a call on an array
fails under ``math`` and the verification drops it. (``torch._dynamo.substitute_in_graph``
cannot do this: numpy ufuncs are not functions, and ``math`` functions already have Dynamo
rules, so it refuses them: "Duplicate object ... with different rules", measured on 2.13.)
"""

from __future__ import annotations

import ast
import copy
import math
import types

import numpy as np

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin, call, resolve
from nstviz.advisor.rewrites._source import FunctionSource, RewriteError, function_source

__all__ = ["NUMPY_TO_MATH", "propose_numpy_scalars"]

NUMPY_TO_MATH = {
    "lcm": "math.lcm", "gcd": "math.gcd", "sqrt": "math.sqrt", "log": "math.log", "log2": "math.log2",
    "log10": "math.log10", "exp": "math.exp", "ceil": "math.ceil", "floor": "math.floor", "abs": "abs",
}


class _ToMath(ast.NodeTransformer):
    def __init__(self, src: FunctionSource) -> None:
        self.src, self.done = src, []

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in NUMPY_TO_MATH and not node.keywords
                and resolve(f.value, self.src) is np):
            self.done.append(ast.unparse(node))
            return ast.copy_location(call(NUMPY_TO_MATH[f.attr], *node.args), node)
        return node


def _helpers(src: FunctionSource, line: int | None) -> list[types.FunctionType]:
    """Module-level Python functions called in the function (on the break's line and the lines feeding it)."""
    nodes: list[ast.AST] = [src.tree]
    if line is not None:
        at = [s for s in ast.walk(src.tree) if isinstance(s, ast.stmt) and not isinstance(s, ast.FunctionDef)
              and s.lineno <= line <= (s.end_lineno or s.lineno)]
        names = {n.id for s in at for n in ast.walk(s) if isinstance(n, ast.Name)}
        feeding = [s for s in ast.walk(src.tree) if isinstance(s, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id in names for t in s.targets)]
        nodes = [*at, *feeding]
    out: list[types.FunctionType] = []
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                obj = resolve(n.func, src)
                if isinstance(obj, types.FunctionType) and obj.__module__ == src.fn.__module__ and obj not in out:
                    out.append(obj)
    return out


def propose_numpy_scalars(fn: object, brk: BreakSite | None = None) -> Proposal:
    """``np.<f>(numbers)`` -> ``math.<f>(numbers)`` in the function and in the helpers it calls."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    targets = [src]
    for h in _helpers(src, src.local_line(brk.line)):
        try:
            targets.append(function_source(h))
        except RewriteError:
            continue
    for t in targets:
        conv = _ToMath(t)
        new_def = conv.visit(copy.deepcopy(t.tree))
        if not conv.done:
            continue
        ast.fix_missing_locations(new_def)
        what = ", ".join(f"`{d}`" for d in conv.done)
        why = f"{what} gave a numpy value that Dynamo traces as an array; math keeps it a Python number"
        out.rewrites.append(Rewrite.of(
            t, new_def, "numpy-to-math", f"{t.fn.__qualname__}: {what} -> math", why, before="import math\n",
            extras={"math": math}))
    return out
