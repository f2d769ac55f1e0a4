"""Remedy: a call Dynamo cannot follow (C code, a skipped library) on tensors becomes a custom op.

``linear_sum_assignment(cost.cpu())`` (scipy) in a Hungarian matcher breaks the graph (GB0007: a
function in a module Dynamo skips). ``custom_ops.py`` wraps the whole breaking function, which
cannot work there: the matcher takes dicts and returns a list of index pairs, not tensors. This
remedy wraps the call itself: ``torch.library.custom_op("nstviz_fix::<callee>")`` takes the call's
tensor (or ndarray, or number) arguments and returns its outputs (arrays or tensors) as tensors; the
rewritten function calls ``torch.ops.nstviz_fix.<callee>(...)`` in its place. The fake is built from
the calls observed when the breaking function runs eagerly on its recorded arguments: each output
dimension is an argument's dimension, or the ``min`` of two, or a constant, that fit every call. The
op checks at run time that the real outputs have the fake's shapes and raises otherwise, so a fake
that does not hold for other inputs is an error, never a wrong shape. An output whose shape
changes with the values (same argument shapes, other output shapes) gets no op: its fake would need
an unbacked size (``ctx.new_dynamic_size()``), which the code after it would then guard on.
The op has no backward: the outputs of such calls (indices) are not differentiated.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import itertools
import re
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, begin, paste_source, resolve
from nstviz.advisor.rewrites._source import FunctionSource, build_function, installed, raw_function
from nstviz.capture._torch_compat import drop_custom_op

__all__ = ["CallOpRewrite", "propose_call_op"]

NAMESPACE = "nstviz_fix"
_serial = itertools.count(1)
_SCALARS = {int: "int", float: "float", bool: "bool"}


def _opaque(obj: Any, message: str) -> bool:
    """A callee Dynamo does not trace: named in the break's message (a skipped module's function), or C code."""
    if obj is None or isinstance(obj, type) or not callable(obj):
        return False
    module = getattr(obj, "__module__", None) or ""
    if module.startswith("torch") or module == "builtins":
        return False
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
    return bool(name) and (f"qualname: {name}" in message or not isinstance(obj, types.FunctionType))


def _calls_at(src: FunctionSource, line: int | None, message: str) -> list[tuple[ast.Call, Any]]:
    if line is None:
        return []
    found = []
    for node in ast.walk(src.tree):
        if not isinstance(node, ast.Call) or not (node.lineno <= line <= (node.end_lineno or node.lineno)):
            continue
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        obj = resolve(node.func, src)
        if _opaque(obj, message):
            found.append((node, obj))
    return found


@contextlib.contextmanager
def _observed(src: FunctionSource, func: ast.expr, callee: Any) -> Iterator[list[tuple[tuple[Any, ...], Any]]]:
    """Record ``(args, result)`` of every call of ``callee`` made through the name ``func`` while the block runs."""
    seen: list[tuple[tuple[Any, ...], Any]] = []

    def recorder(*args: Any) -> Any:
        out = callee(*args)
        seen.append((args, out))
        return out

    owner: Any
    if isinstance(func, ast.Name):
        owner, attr = src.fn.__globals__, func.id
    else:
        assert isinstance(func, ast.Attribute)
        owner, attr = resolve(func.value, src), func.attr
    get = owner.get if isinstance(owner, dict) else lambda k: getattr(owner, k, None)
    if get(attr) is not callee:
        raise LookupError("the callee is not looked up where it can be recorded")
    if isinstance(owner, dict):
        owner[attr] = recorder
    else:
        setattr(owner, attr, recorder)
    try:
        yield seen
    finally:
        if isinstance(owner, dict):
            owner[attr] = callee
        else:
            setattr(owner, attr, callee)


def _as_tensors(out: Any) -> tuple[list[torch.Tensor], bool] | None:
    """The outputs as tensors and whether there were several (a tuple/list), or None when not arrays/tensors."""
    def one(o: Any) -> torch.Tensor | None:
        if isinstance(o, torch.Tensor):
            return o
        if isinstance(o, np.ndarray) and o.dtype != object:
            return torch.as_tensor(o)
        return None

    if isinstance(out, (tuple, list)):
        got = [one(o) for o in out]
        return (got, True) if got and all(g is not None for g in got) else None  # type: ignore[return-value]
    single = one(out)
    return ([single], False) if single is not None else None


def _dim(sizes: list[int], obs_args: list[list[Any]], kinds: list[str]) -> str | None:
    """An expression of the arguments' shapes equal to ``sizes`` on every call (a dim, a min of two, a constant)."""
    tensors = [j for j, k in enumerate(kinds) if k in ("tensor", "ndarray")]
    dims = [(j, e) for j in tensors for e in range(obs_args[0][j].ndim)]
    for j, e in dims:
        if all(a[j].shape[e] == s for a, s in zip(obs_args, sizes, strict=True)):
            return f"a{j}.shape[{e}]"
    for (j, e), (k, f) in itertools.combinations(dims, 2):
        if all(min(a[j].shape[e], a[k].shape[f]) == s for a, s in zip(obs_args, sizes, strict=True)):
            return f"min(a{j}.shape[{e}], a{k}.shape[{f}])"
    return str(sizes[0]) if len(set(sizes)) == 1 else None


def propose_call_op(fn: object, brk: BreakSite | None, calls: Sequence[tuple[Any, ...]]) -> Proposal:
    """The opaque call at the break as a custom op, its fake from the calls seen running ``fn`` on ``calls``."""
    brk, out, src = begin(fn, brk)
    if src is None:
        return out
    found = _calls_at(src, src.local_line(brk.line), f"{brk.gb_id or ''} {brk.message}")
    if not found:
        out.fits = False
        out.notes.append("no call of C code or of a skipped library with positional arguments at the break")
        return out
    node, callee = found[0]
    name = re.sub(r"\W", "_", getattr(callee, "__name__", "call"))
    try:
        with _observed(src, node.func, callee) as seen, torch.no_grad():
            for c in calls:
                raw_function(fn)(*c)
    except Exception as e:  # the function cannot run again on its recorded arguments: no fake
        out.notes.append(f"{name}: its calls could not be observed ({type(e).__name__}: {e}); no custom op")
        return out
    if len(seen) < 2:
        out.notes.append(f"{name}: need two or more observed calls to build the fake (got {len(seen)}); no custom op")
        return out
    problem, spec = _spec(name, seen)
    if problem:
        out.notes.append(problem)
        return out
    kinds, ann, fakes, several = spec
    op_code = _op_code(name, kinds, ann, fakes, several)
    new_def = _CallToOp(node, name, kinds).visit(copy.deepcopy(src.tree))
    ast.fix_missing_locations(new_def)
    callee_text = ast.unparse(node.func)
    why = (f"{callee_text}(...) is code Dynamo cannot trace ({brk.gb_id or 'a C call'}): it runs as the custom op "
           f"{NAMESPACE}::{name} (fake from {len(seen)} observed calls; a fake that does not hold raises; no backward)")
    out.rewrites.append(CallOpRewrite(
        remedy="call-op",
        description=f"{src.fn.__qualname__}: {callee_text}(...) -> torch.ops.{NAMESPACE}.{name}",
        source=paste_source(src, new_def, why, before=_import_of(callee, src.fn, callee_text, name) + op_code + "\n\n"),
        original=src.fn,
        function=build_function(src, new_def, {"torch": torch}),
        op_code=op_code,
        op_name=name,
        callee=callee,
        src=src,
        new_def=new_def,
        values_iterated=_outputs_iterated(src.tree, node),
    ))
    return out


def _outputs_iterated(tree: ast.FunctionDef, call: ast.Call) -> bool:
    """Whether a name the statement holding ``call`` assigns is iterated by a ``for`` or a comprehension."""
    bound = {
        t.id
        for stmt in ast.walk(tree) if isinstance(stmt, ast.Assign) and any(n is call for n in ast.walk(stmt.value))
        for target in stmt.targets for t in ast.walk(target) if isinstance(t, ast.Name)
    }
    loops = [n.iter for n in ast.walk(tree) if isinstance(n, ast.For | ast.comprehension)]
    return any(isinstance(n, ast.Name) and n.id in bound for it in loops for n in ast.walk(it))


def _spec(name: str, seen: list[tuple[tuple[Any, ...], Any]]) -> tuple[str, Any]:
    """The op's argument kinds and annotations, its fakes and whether it returns several outputs; or why not."""
    nargs = {len(a) for a, _ in seen}
    if len(nargs) != 1:
        return f"{name}: called with different numbers of arguments; no custom op", None
    kinds, ann = [], []
    for j in range(nargs.pop()):
        types_j = {type(a[j]) for a, _ in seen}
        if all(issubclass(t, torch.Tensor) for t in types_j):
            kinds.append("tensor")
            ann.append("torch.Tensor")
        elif types_j == {np.ndarray}:
            kinds.append("ndarray")
            ann.append("torch.Tensor")
        elif len(types_j) == 1 and next(iter(types_j)) in _SCALARS:
            kinds.append("scalar")
            ann.append(_SCALARS[next(iter(types_j))])
        else:
            return f"{name}: argument {j} is a {', '.join(t.__name__ for t in types_j)}; no custom op", None
    outs = [_as_tensors(o) for _, o in seen]
    if any(o is None for o in outs):
        return f"{name}: returns something other than arrays or tensors; no custom op", None
    if len({(len(o[0]), o[1]) for o in outs if o is not None}) != 1:
        return f"{name}: the number of outputs changes between calls; no custom op", None
    tensors = [o[0] for o in outs if o is not None]
    several = bool(outs[0] and outs[0][1])
    by_shapes: dict[tuple, set] = {}
    for (a, _), o in zip(seen, tensors, strict=True):
        key = tuple(tuple(x.shape) if kinds[j] != "scalar" else x for j, x in enumerate(a))
        by_shapes.setdefault(key, set()).add(tuple(tuple(t.shape) for t in o))
    if any(len(v) > 1 for v in by_shapes.values()):
        return (f"{name}: its output shapes depend on the argument values (same argument shapes, other output "
                "shapes): a fake would need an unbacked size (ctx.new_dynamic_size()); no custom op"), None
    obs_args = [list(a) for a, _ in seen]
    fakes = []
    for i in range(len(tensors[0])):
        if len({(t[i].dtype, t[i].device, t[i].dim()) for t in tensors}) != 1:
            return f"{name}: output {i} changes dtype, device or rank between calls; no custom op", None
        dims = [_dim([t[i].shape[d] for t in tensors], obs_args, kinds) for d in range(tensors[0][i].dim())]
        if any(d is None for d in dims):
            return f"{name}: output {i}'s shape is neither an argument's nor constant; no custom op", None
        fakes.append(("(" + "".join(f"{d}, " for d in dims) + ")", tensors[0][i].dtype, str(tensors[0][i].device)))
    return "", (kinds, ann, fakes, several)


def _op_code(name: str, kinds: list[str], ann: list[str], fakes: list[tuple[str, torch.dtype, str]], several: bool) -> str:
    params = [f"a{j}" for j in range(len(kinds))]
    sig = ", ".join(f"{p}: {t}" for p, t in zip(params, ann, strict=True))
    args = ", ".join(f"{p}.numpy()" if k == "ndarray" else p for p, k in zip(params, kinds, strict=True))
    returns = f"tuple[{', '.join(['torch.Tensor'] * len(fakes))}]" if several else "torch.Tensor"
    shapes = "(" + "".join(f"{s}, " for s, _, _ in fakes) + ")"
    fake_values = [f"torch.empty({s}, dtype={d}, device={dev!r})" for s, d, dev in fakes]
    fake = "(" + "".join(f"{f}, " for f in fake_values) + ")" if several else fake_values[0]
    inputs = [p for p, k in zip(params, kinds, strict=True) if k != "scalar"]
    # an output may not alias an input of a custom op
    clone = f"\n    outs = tuple(o.clone() if any(o.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() " \
        f"for x in ({''.join(f'{p}, ' for p in inputs)})) else o for o in outs)" if inputs else ""
    got = "outs" if several else "outs[0]"
    return f'''@torch.library.custom_op("{NAMESPACE}::{name}", mutates_args=())
def _{name}_op({sig}) -> {returns}:
    result = _nstviz_{name}({args})
    outs = tuple(torch.as_tensor(o) for o in {"result" if several else "(result,)"}){clone}
    expected = {shapes}
    if tuple(tuple(o.shape) for o in outs) != expected:
        raise RuntimeError(f"nstviz_fix::{name}: the outputs have shapes {{[tuple(o.shape) for o in outs]}}, "
                           f"its fake (from observed calls) says {{list(expected)}}: the fake does not hold here")
    return {got}


@_{name}_op.register_fake
def _{name}_fake({", ".join(params)}):
    # from the outputs observed in eager calls
    return {fake}
'''


def _import_of(callee: Any, fn: types.FunctionType, callee_text: str, name: str) -> str:
    """The lines that bind the callee as ``_nstviz_<name>`` in pasted code."""
    module = getattr(callee, "__module__", None)
    attr = getattr(callee, "__name__", None)
    if module and attr and getattr(sys.modules.get(module), attr, None) is callee:
        return f"import torch\nfrom {module} import {attr} as _nstviz_{name}\n\n\n"
    if fn.__module__ in ("__main__", "__recommendation__") or fn.__module__ not in sys.modules:
        return f"import torch\n\n_nstviz_{name} = {callee_text}\n\n\n"
    root = callee_text.split(".", 1)[0]
    return f"import torch\nfrom {fn.__module__} import {root}\n\n_nstviz_{name} = {callee_text}\n\n\n"


class _CallToOp(ast.NodeTransformer):
    """The call at the break -> ``torch.ops.nstviz_fix.<name>(...)`` (ndarray arguments through ``torch.as_tensor``)."""

    def __init__(self, target: ast.Call, name: str, kinds: list[str]) -> None:
        self.target, self.name, self.kinds = target, name, kinds

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if (node.lineno, node.col_offset, ast.unparse(node)) != (
                self.target.lineno, self.target.col_offset, ast.unparse(self.target)):
            return node
        func: ast.expr = ast.Name(id="torch", ctx=ast.Load())
        for part in ("ops", NAMESPACE, self.name):
            func = ast.Attribute(value=func, attr=part, ctx=ast.Load())
        args = [ast.Call(func=ast.Attribute(value=ast.Name(id="torch", ctx=ast.Load()), attr="as_tensor", ctx=ast.Load()),
                         args=[a], keywords=[]) if k == "ndarray" else a for a, k in zip(node.args, self.kinds, strict=True)]
        return ast.copy_location(ast.Call(func=func, args=args, keywords=[]), node)


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Attribute(self, node: ast.Attribute) -> ast.Attribute:
        self.generic_visit(node)
        if node.attr == self.old and isinstance(node.value, ast.Attribute) and node.value.attr == NAMESPACE:
            node.attr = self.new
        return node


@dataclass
class CallOpRewrite(Rewrite):
    """A rewrite whose function calls a custom op by ``torch.ops``: registered while applied, removed after.

    Each application registers the op under a name of its own (torch keeps one definition per
    name) and installs the function built to call that name, so nothing stays registered.
    """

    op_code: str = ""
    """The op's definition and fake, calling the callee as ``_nstviz_<op_name>``."""
    op_name: str = ""
    callee: Any = None
    src: FunctionSource | None = None
    new_def: ast.FunctionDef | None = None
    values_iterated: bool = False
    """The function loops over the call's outputs in Python (``for m in out``): each element would be a
    tensor in the graph where the code needs a number, so the whole function as an op goes first."""

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Register the op, run the block with the rewrite in place, then remove the op; always undone."""
        assert self.src is not None and self.new_def is not None
        live = f"{self.op_name}_{next(_serial)}"
        ns: dict[str, Any] = {"torch": torch, f"_nstviz_{self.op_name}": self.callee}
        code = self.op_code.replace(f'"{NAMESPACE}::{self.op_name}"', f'"{NAMESPACE}::{live}"')
        exec(compile(code, f"<nstviz custom op for {self.op_name}>", "exec"), ns)
        op = ns[f"_{self.op_name}_op"]
        try:
            fn = build_function(self.src, _Rename(self.op_name, live).visit(copy.deepcopy(self.new_def)), {"torch": torch})
            with installed(self.original, fn):  # type: ignore[arg-type]
                yield
        finally:
            drop_custom_op(op, f"{NAMESPACE}::{live}")
