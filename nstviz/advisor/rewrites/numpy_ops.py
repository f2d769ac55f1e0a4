"""Remedy: a function that draws a mask with numpy runs as a custom op returning a tensor (``numpy-op``).

SpecAugment's ``_compute_mask_indices`` (Whisper, SEW, UniSpeech, every Wav2Vec2 copy) calls
``np.random.rand(1).item()`` and ``np.random.choice`` and returns an ``np.ndarray``: Dynamo
breaks on it (GB0033), nonstrict_trace refuses it (``None`` arguments, an ndarray output), and
where Dynamo does trace numpy it runs it on torch's generator, so a compiled run draws other masks
than eager. As a ``torch.library.custom_op`` the function runs eagerly at run time, once per call
as in eager, on numpy's own generator: the same masks, and no break. The op takes what the calls
passed (ints, floats, bools, a tuple of ints as ``list[int]``, tensors or ``None``) and returns the
array as a tensor; its fake is ``torch.empty`` of the output's shape, each size written as the
argument that gave it on every observed call (``shape[1]``). The function's callers then get a
tensor where they got an ndarray: ``torch.tensor(mask, dtype=torch.bool)`` takes either, and any
other use is checked by the verification on two input sets. No backward (a mask needs none).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Sequence
from typing import Any

import torch

from nstviz.advisor.rewrites._core import BreakSite, Proposal
from nstviz.advisor.rewrites._source import RewriteError, function_source
from nstviz.advisor.rewrites.custom_ops import NAMESPACE, op_rewrite

__all__ = ["propose_numpy_op"]


def _annotation(values: list[Any]) -> str | None:
    """The op schema type of one parameter from the values the calls passed, or None (not supported)."""
    kinds = {type(v) for v in values}
    if all(issubclass(k, torch.Tensor) for k in kinds):
        return "torch.Tensor"
    if all(issubclass(k, torch.Tensor) or k is type(None) for k in kinds):
        return "torch.Tensor | None"
    for k, name in ((bool, "bool"), (int, "int"), (float, "float")):
        if kinds == {k}:
            return name
    if kinds == {int, float}:
        return "float"
    if kinds <= {tuple, list} and all(type(x) is int for v in values for x in v):
        return "list[int]"
    return None


def _dim(size_per_call: list[int], calls: Sequence[tuple[Any, ...]], params: list[str], ann: list[str]) -> str | None:
    """An output size as the int argument (or element of a ``list[int]`` one) equal to it on every call."""
    for j, (name, kind) in enumerate(zip(params, ann, strict=True)):
        if kind == "int" and all(c[j] == s for c, s in zip(calls, size_per_call, strict=True)):
            return name
        if kind == "list[int]":
            for e in range(min(len(c[j]) for c in calls)):
                if all(c[j][e] == s for c, s in zip(calls, size_per_call, strict=True)):
                    return f"{name}[{e}]"
    return str(size_per_call[0]) if len(set(size_per_call)) == 1 else None


def _outputs(raw: Any, calls: Sequence[tuple[Any, ...]]) -> list[Any]:
    """What ``raw`` returns on each call, numpy's generator put back after (the runs must draw as eager does)."""
    import numpy as np

    state = np.random.get_state()
    try:
        return [raw(*c) for c in calls]
    finally:
        np.random.set_state(state)


def propose_numpy_op(fn: Any, brk: BreakSite | None, calls: Sequence[tuple[Any, ...]]) -> Proposal:
    """``fn``, a plain function returning an ``np.ndarray``, as a custom op returning a tensor (two or more calls seen)."""
    out = Proposal()
    try:
        src = function_source(fn)
    except RewriteError as e:
        out.notes.append(str(e))
        return out
    raw = src.fn
    a = src.tree.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or "." in raw.__qualname__ or len(calls) < 2:
        out.fits = False
        return out
    import numpy as np

    results = _outputs(raw, calls)
    if not all(isinstance(r, np.ndarray) and r.dtype.kind in "biuf" for r in results):
        out.fits = False  # not a numpy function: custom_ops.py's (tensors) or none
        return out
    params = [p.arg for p in a.args]
    ann = [_annotation([c[j] for c in calls]) for j in range(len(params))]
    if None in ann:
        bad = params[ann.index(None)]
        out.notes.append(f"{raw.__qualname__}: argument {bad} is a {type(calls[0][ann.index(None)]).__name__}; no numpy op")
        return out
    kinds: list[str] = [k for k in ann if k is not None]
    if len({(r.dtype, r.ndim) for r in results}) != 1:
        out.notes.append(f"{raw.__qualname__}: its output changes dtype or rank between calls; no numpy op")
        return out
    dims = [_dim([r.shape[d] for r in results], calls, params, kinds) for d in range(results[0].ndim)]
    if any(d is None for d in dims):
        out.notes.append(f"{raw.__qualname__}: its output's shape is neither an argument's nor constant; no numpy op")
        return out
    dtype = torch.from_numpy(results[0][:0]).dtype
    name = re.sub(r"\W", "_", raw.__qualname__)
    source = _code(name, raw.__name__, src.tree, params, kinds, [d or "" for d in dims], dtype, brk)
    out.rewrites.append(op_rewrite(
        "numpy-op", f"{raw.__qualname__} (numpy, returns an ndarray) runs as the custom op {NAMESPACE}::{name}, "
        "returning a tensor", raw, src, source, name,
    ))
    return out


def _code(name: str, fname: str, tree: ast.FunctionDef, params: list[str], ann: list[str], dims: list[str],
          dtype: torch.dtype, brk: BreakSite | None) -> str:
    sig = ", ".join(f"{p}: {t}" for p, t in zip(params, ann, strict=True))
    plain = ", ".join(params)
    to_eager = ", ".join(f"tuple({p})" if t == "list[int]" else p for p, t in zip(params, ann, strict=True))
    to_op = ", ".join(f"list({p})" if t == "list[int]" else p for p, t in zip(params, ann, strict=True))
    shape = "(" + "".join(f"{d}, " for d in dims) + ")"
    bare = copy.deepcopy(tree.args)  # the original's parameters and defaults, without annotations
    for arg in bare.args:
        arg.annotation = None
    why = f"{fname} draws with numpy and returns an ndarray" + (f" ({brk.gb_id})" if brk and brk.gb_id else "")
    return f'''import numpy as np
import torch

_{name}_eager = {fname}  # the original function, run eagerly inside the op (numpy's generator, as in eager)


@torch.library.custom_op("{NAMESPACE}::{name}", mutates_args=())
def _{name}_op({sig}) -> torch.Tensor:
    return torch.from_numpy(np.array(_{name}_eager({to_eager})))


@_{name}_op.register_fake
def _{name}_fake({plain}):
    return torch.empty({shape}, dtype={dtype})


# nstviz: {why}: it runs as one custom op that returns a tensor (paste after the original def)
def {fname}({ast.unparse(bare)}):
    return _{name}_op({to_op})
'''
