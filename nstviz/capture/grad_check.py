"""Gradients of a call's outputs, to check that a rewrite keeps them and not only the outputs.

A rewrite can give the outputs of the code as written and still change its gradients: a
``torch.cond`` around a dropout replays the branch in its backward and draws new masks (torch
2.13: outputs equal, parameter gradients differ on every seed). Where the code trains, the
advisor's check on other inputs compares these gradients too (:func:`gradients`,
:func:`gradients_differ`), taken with ``torch.autograd.grad`` so no ``.grad`` is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch

__all__ = ["Gradients", "gradients", "gradients_changed", "gradients_differ", "gradients_or_none", "trains"]

Gradients = dict[int, tuple[torch.Tensor, torch.Tensor]]
"""``id(leaf) -> (leaf, its gradient)`` for every leaf the outputs depend on."""

_MAX_GRAPH_NODES = 500_000  # a bound on the autograd graph walk, far above a real model's


def trains(fn: Callable[..., Any]) -> bool:
    """Whether a call of ``fn`` should keep gradients: its module is in training mode.

    ``fn`` an ``nn.Module`` or one's bound method: that module's ``training``. Any other
    callable: True (the module it uses, if any, is not known; the outputs decide).
    """
    owner = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    return bool(owner.training) if isinstance(owner, torch.nn.Module) else True


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _tensors(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _tensors(v)


def _leaves(roots: list[torch.Tensor]) -> list[torch.Tensor]:
    """The leaf tensors (parameters, inputs) that require grad and ``roots`` depend on."""
    leaves: dict[int, torch.Tensor] = {}
    seen: set[int] = set()
    stack = [t.grad_fn for t in roots if t.grad_fn is not None]
    for t in roots:
        if t.grad_fn is None and t.requires_grad:
            leaves[id(t)] = t
    while stack and len(seen) < _MAX_GRAPH_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)  # AccumulateGrad: the leaf it accumulates into
        if isinstance(variable, torch.Tensor):
            leaves[id(variable)] = variable
        stack.extend(n for n, _ in node.next_functions)
    return list(leaves.values())


def gradients(outputs: Any) -> Gradients | None:
    """The gradients of a fixed random projection of ``outputs`` w.r.t. every leaf they depend on.

    The projection (each floating output tensor times random weights drawn from a generator
    seeded 0, summed) is the same for two calls whose outputs have the same shapes. None when
    no output carries a gradient.
    """
    roots = [t for t in _tensors(outputs) if t.requires_grad and t.is_floating_point()]
    if not roots:
        return None
    leaves = _leaves(roots)
    if not leaves:
        return None
    g = torch.Generator().manual_seed(0)
    loss = sum((t * torch.randn(t.shape, generator=g).to(t.device, t.dtype)).sum() for t in roots)
    grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    return {
        id(leaf): (leaf, torch.zeros_like(leaf) if grad is None else grad.detach())
        for leaf, grad in zip(leaves, grads, strict=True)
    }


def gradients_differ(want: Gradients, got: Gradients) -> str | None:
    """Why ``got`` differs from ``want`` (the first leaf whose gradient does), or None when they agree.

    A parameter one side did not reach has gradient zero there. Other leaves only one side has
    are tensors the call made itself (a forward that sets ``requires_grad`` on an intermediate):
    they have no counterpart and are not compared. Tolerances: relative 1e-3, absolute 1e-3 of
    the largest expected entry (a redrawn dropout mask or a lost gradient is off by far more).
    Two calls that share no leaf (the code builds its model anew) are not compared: None.
    """
    if not want.keys() & got.keys():
        return None
    one_sided = want.keys() ^ got.keys()
    for key in [*want, *(k for k in got if k not in want)]:  # in the autograd walk's order: the same report each time
        if key in one_sided and not isinstance((want.get(key) or got[key])[0], torch.nn.Parameter):
            continue
        leaf, expected = want.get(key) or (got[key][0], torch.zeros_like(got[key][1]))
        actual = got[key][1] if key in got else torch.zeros_like(expected)
        finite = expected[torch.isfinite(expected)]
        scale = float(finite.abs().max()) if finite.numel() else 0.0
        try:
            torch.testing.assert_close(actual, expected, rtol=1e-3, atol=1e-6 + 1e-3 * scale, equal_nan=True)
        except AssertionError:
            shape = "x".join(map(str, leaf.shape)) or "scalar"
            return f"the gradient of a {shape} {'parameter' if isinstance(leaf, torch.nn.Parameter) else 'tensor'}"
    return None


def gradients_or_none(returned: Any) -> Gradients | None:
    """:func:`gradients` of the code as written, or None when its own backward fails (nothing to compare)."""
    try:
        return gradients(returned)
    except Exception:
        return None


def gradients_changed(want: Gradients | None, returned: Any, *, taken: bool = False) -> str | None:
    """Why the gradients of ``returned`` (a compiled call's outputs) differ from ``want``; None when they agree.

    None too when there is nothing to compare (``want`` is None: the code does not train, or its
    own backward failed). ``taken``: ``returned`` is already its :func:`gradients`.
    """
    if want is None:
        return None
    got = returned if taken else gradients(returned)
    return "no gradient reaches the parameters" if got is None else gradients_differ(want, got)
