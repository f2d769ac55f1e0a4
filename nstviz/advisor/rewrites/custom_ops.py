"""Remedy 4: a function whose C/builtin calls break the graph runs as a ``torch.library.custom_op``.

The custom op (``nstviz_fix::<name>``, ``mutates_args=()``) calls the original function
eagerly; Dynamo sees one opaque node. Its ``register_fake`` is built from the outputs observed
in eager calls: each output dimension is written as an input dimension that matched it on every
call, or as a constant. When two calls with the same input shapes gave different output shapes,
the output shape depends on values and no op is proposed. There is no backward formula: the op
is for inference (a backward through it raises).
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import itertools
import re
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite
from nstviz.advisor.rewrites._source import (
    FunctionSource,
    RewriteError,
    build_function,
    function_source,
    installed,
    raw_function,
)
from nstviz.capture._torch_compat import drop_custom_op

__all__ = ["NAMESPACE", "CustomOpRewrite", "op_rewrite", "propose_custom_op", "recorded_calls"]

NAMESPACE = "nstviz_fix"
_serial = itertools.count(1)
_SCALARS = {int: "int", float: "float", bool: "bool"}


@contextlib.contextmanager
def recorded_calls(fn: Any) -> Iterator[list[tuple[Any, ...]]]:
    """Record the positional arguments of every call of ``fn`` that returns while the block runs (restored after).

    A call that raised (the code on an input set it does not take) is no example to build a fake from.
    """
    raw = raw_function(fn)
    calls: list[tuple[Any, ...]] = []
    inner = types.FunctionType(raw.__code__, raw.__globals__, raw.__name__, raw.__defaults__, raw.__closure__)
    inner.__kwdefaults__ = raw.__kwdefaults__

    def recorder(*args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(inner).bind(*args, **kwargs)
        bound.apply_defaults()
        out = inner(*args, **kwargs)
        calls.append(tuple(bound.arguments.values()))
        return out

    recorder.__qualname__, recorder.__name__, recorder.__module__ = raw.__qualname__, raw.__name__, raw.__module__
    with installed(raw, recorder):  # type: ignore[arg-type]
        yield calls


def _flat(out: Any) -> list[torch.Tensor] | None:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    return None


def _dim_expr(d: int, i: int, outs: list[list[torch.Tensor]], calls: Sequence[tuple[Any, ...]], params: list[str]) -> str | None:
    sizes = [o[i].shape[d] for o in outs]
    for j, name in enumerate(params):
        arg0 = calls[0][j]
        if not isinstance(arg0, torch.Tensor):
            continue
        for e in sorted(range(arg0.dim()), key=lambda e: e != d):  # the same dimension first: (1, 1, n) is ambiguous
            if all(isinstance(c[j], torch.Tensor) and c[j].dim() == arg0.dim() and c[j].shape[e] == s
                   for c, s in zip(calls, sizes, strict=True)):
                return f"{name}.shape[{e}]"
    return str(sizes[0]) if len(set(sizes)) == 1 else None


def propose_custom_op(fn: Any, brk: BreakSite | None, calls: Sequence[tuple[Any, ...]]) -> Proposal:
    """A custom op wrapping ``fn``, its fake built from eager runs on ``calls`` (its observed arguments, two or more)."""
    out = Proposal()
    try:
        src = function_source(fn)
    except RewriteError as e:
        out.notes.append(str(e))
        return out
    raw = src.fn
    a = src.tree.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        out.notes.append(f"{raw.__qualname__}: *args/**kwargs/keyword-only parameters; no custom op")
        return out
    params = [p.arg for p in a.args]
    if len(calls) < 2:
        out.notes.append(f"{raw.__qualname__}: need two or more observed calls to build the fake (got {len(calls)})")
        return out
    ann = []
    for j, p in enumerate(params):
        kinds = {type(c[j]) for c in calls}
        if all(issubclass(k, torch.Tensor) for k in kinds):
            ann.append("torch.Tensor")
        elif len(kinds) == 1 and next(iter(kinds)) in _SCALARS:
            ann.append(_SCALARS[next(iter(kinds))])
        else:
            out.notes.append(f"{raw.__qualname__}: argument {p} is a {', '.join(k.__name__ for k in kinds)}; no custom op")
            return out
    outs: list[list[torch.Tensor]] = []
    aliases = False
    with torch.no_grad():
        for c in calls:
            flat = _flat(raw(*c))
            if flat is None:
                out.notes.append(f"{raw.__qualname__}: returns something other than tensors; no custom op")
                return out
            ptrs = {x.untyped_storage().data_ptr() for x in c if isinstance(x, torch.Tensor)}
            aliases |= any(o.untyped_storage().data_ptr() in ptrs for o in flat)
            outs.append(flat)
    if len({len(o) for o in outs}) != 1:
        out.notes.append(f"{raw.__qualname__}: the number of outputs changes between calls; no custom op")
        return out
    by_shapes: dict[tuple, set] = {}
    for c, o in zip(calls, outs, strict=True):
        key = tuple(tuple(x.shape) if isinstance(x, torch.Tensor) else x for x in c)
        by_shapes.setdefault(key, set()).add(tuple(tuple(t.shape) for t in o))
    if any(len(v) > 1 for v in by_shapes.values()):
        out.notes.append(f"{raw.__qualname__}: its output shapes depend on the input values (same input shapes, "
                         "different output shapes); a fake cannot be written, no custom op")
        return out
    fakes = []
    first_tensor = next((p for p, t in zip(params, ann, strict=True) if t == "torch.Tensor"), None)
    for i in range(len(outs[0])):
        o0 = outs[0][i]
        if len({(t[i].dtype, t[i].device, t[i].dim()) for t in outs}) != 1:
            out.notes.append(f"{raw.__qualname__}: output {i} changes dtype, device or rank between calls; no custom op")
            return out
        dims = [_dim_expr(d, i, outs, calls, params) for d in range(o0.dim())]
        if any(d is None for d in dims):
            out.notes.append(f"{raw.__qualname__}: output {i}'s shape is neither an input's nor constant; no custom op")
            return out
        same_dev = first_tensor is not None and all(
            t[i].device == c[params.index(first_tensor)].device for t, c in zip(outs, calls, strict=True))
        dev = f"{first_tensor}.device" if same_dev else repr(str(o0.device))
        shape = "(" + "".join(f"{d}, " for d in dims) + ")"
        fakes.append(f"torch.empty({shape}, dtype={o0.dtype}, device={dev})")
    name = re.sub(r"\W", "_", raw.__qualname__.replace(".<locals>.", "_"))
    returns = "torch.Tensor" if isinstance(raw(*calls[0]), torch.Tensor) else f"tuple[{', '.join(['torch.Tensor'] * len(fakes))}]"
    source = _code(name, f"{NAMESPACE}::{name}", params, ann, returns, fakes, aliases, raw.__name__, brk,
                   _with_defaults(params, raw, src.tree))
    out.rewrites.append(op_rewrite(
        "custom-op", f"{raw.__qualname__} runs as the custom op {NAMESPACE}::{name} (fake from {len(calls)} observed calls)",
        raw, src, source, name,
    ))
    return out


def op_rewrite(remedy: str, description: str, raw: Any, src: FunctionSource, source: str, name: str) -> CustomOpRewrite:
    """The rewrite of ``raw`` whose pasted ``source`` defines the op ``NAMESPACE::name``.

    After its ``# nstviz:`` line ``source`` holds the function that calls the op; the op is
    registered only while the rewrite is applied.
    """
    new_def = ast.parse(source.split("# nstviz:", 1)[1].split("\n", 1)[1]).body[0]
    assert isinstance(new_def, ast.FunctionDef)
    op_global = f"_{name}_op"
    return CustomOpRewrite(
        remedy=remedy,
        description=description,
        source=source,
        original=raw,
        function=build_function(src, new_def, {"torch": torch, op_global: _unregistered}),
        op_code=source.split("# nstviz:")[0],
        op_name=f"{NAMESPACE}::{name}",
        op_global=op_global,
    )


def _unregistered(*args: Any) -> Any:
    raise RuntimeError("nstviz: this custom op is registered only while its rewrite is applied")


@dataclass
class CustomOpRewrite(Rewrite):
    """A rewrite whose function calls a custom op: the op is registered while applied, and removed after.

    Each application registers the op under a name of its own (torch keeps one definition per
    name), so nothing nstviz defined stays registered in ``torch.library`` after the advisor.
    """

    op_code: str = ""
    """The op's definition and fake (the pasted code before the rewritten ``def``)."""
    op_name: str = ""
    """``nstviz_fix::<name>`` as pasted."""
    op_global: str = ""
    """The name the rewritten function calls the op by (a closure cell of its own)."""

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Register the op, run the block with the rewrite in place, then remove the op; always undone."""
        raw = self.original
        live = f"{self.op_name}_{next(_serial)}"
        ns: dict[str, Any] = {"torch": torch, raw.__name__: types.FunctionType(
            raw.__code__, raw.__globals__, raw.__name__, raw.__defaults__, raw.__closure__)}
        exec(compile(self.op_code.replace(f'"{self.op_name}"', f'"{live}"'),
                     f"<nstviz custom op for {raw.__qualname__}>", "exec"), ns)
        op = ns[self.op_global]
        code = self.function.__code__  # type: ignore[attr-defined]
        cell = dict(zip(code.co_freevars, self.function.__closure__ or (), strict=False))[self.op_global]  # type: ignore[attr-defined]
        cell.cell_contents = op
        try:
            with super().applied():
                yield
        finally:
            cell.cell_contents = _unregistered
            drop_custom_op(op, live)


def _with_defaults(params: list[str], raw: Any, tree: ast.FunctionDef) -> str:
    """``params`` as the original's signature writes them: its defaults kept (callers may leave them out).

    A default is written as its value where that is a literal, else as the original's source text.
    """
    values, nodes = raw.__defaults__ or (), tree.args.defaults
    first = len(params) - len(values)

    def text(k: int) -> str:
        with contextlib.suppress(ValueError, SyntaxError, TypeError):
            ast.literal_eval(repr(values[k]))
            return repr(values[k])
        return ast.unparse(nodes[k])

    return ", ".join(p if i < first else f"{p}={text(i - first)}" for i, p in enumerate(params))


def _code(name: str, qual: str, params: list[str], ann: list[str], returns: str, fakes: list[str], aliases: bool,
          fname: str, brk: BreakSite | None, signature: str) -> str:
    sig = ", ".join(f"{p}: {t}" for p, t in zip(params, ann, strict=True))
    plain = ", ".join(params)
    call = f"_{name}_eager({plain})"
    if aliases:  # a custom op's outputs may not alias its inputs
        call = f"torch.utils._pytree.tree_map(torch.clone, {call})"
    fake = fakes[0] if returns == "torch.Tensor" else "(" + "".join(f"{f}, " for f in fakes) + ")"
    why = f"{fname} calls code Dynamo cannot trace" + (f" ({brk.gb_id})" if brk and brk.gb_id else "")
    return f'''import torch

_{name}_eager = {fname}  # the original function, run eagerly inside the op


@torch.library.custom_op("{qual}", mutates_args=())
def _{name}_op({sig}) -> {returns}:
    return {call}


@_{name}_op.register_fake
def _{name}_fake({plain}):
    # from the outputs observed in eager calls
    return {fake}


# nstviz: {why}: it runs as one custom op (paste after the original def; inference only, no backward)
def {fname}({signature}):
    return _{name}_op({plain})
'''
