"""Verify a rewrite: outputs equal eager on every input set, and fewer graphs by ``explain``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from nstviz.advisor.rewrites._core import Rewrite
from nstviz.capture._torch_compat import dynamo_explain, dynamo_reset
from nstviz.capture.grad_check import gradients_changed, gradients_or_none, trains
from nstviz.capture.state import rng_state, set_rng_state

__all__ = ["Verdict", "choose", "graph_count", "input_variants", "verify"]


@dataclass
class Verdict:
    """The outcome of :func:`verify`."""

    kept: bool
    graphs_before: int
    graphs_after: int
    outputs_match: list[bool] = field(default_factory=list)
    reason: str = ""


def graph_count(fn: Callable[..., Any], args: Sequence[Any]) -> int:
    """``torch._dynamo.explain``'s graph count for one call (caches reset before)."""
    return _explain(fn, args)[0]


def _explain(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[int, int]:
    """(graphs, breaks listed) by ``explain`` for one call; 0 graphs means Dynamo skipped the frame."""
    dynamo_reset()
    e = dynamo_explain(fn)(*args)
    return int(e.graph_count), len(e.break_reasons)


def input_variants(args: Sequence[Any], seed: int = 0) -> list[tuple[Any, ...]]:
    """The observed inputs, the same shapes with other random values, and the negated inputs.

    Negation flips sign-based conditions, so a data-dependent branch usually takes its other side.
    """
    g = torch.Generator().manual_seed(seed)

    def other(a: Any) -> Any:
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return torch.randn(a.shape, generator=g, dtype=a.dtype).to(a.device) * (a.std() if a.numel() > 1 else 1)
        return a

    def neg(a: Any) -> Any:
        return -a if isinstance(a, torch.Tensor) and a.is_floating_point() else a

    return [tuple(args), tuple(other(a) for a in args), tuple(neg(a) for a in args)]


def _same(a: Any, b: Any) -> bool:
    try:
        torch.testing.assert_close(a, b, equal_nan=True)
    except (AssertionError, TypeError, ValueError):
        return False
    return True


def verify(
    original: Callable[..., Any],
    rewrite: Rewrite,
    input_sets: Sequence[Sequence[Any]],
    *,
    entry: Callable[..., Any] | None = None,
    backend: str = "aot_eager",
    before: int | None = None,
) -> Verdict:
    """Run ``entry`` (default: ``original``) eagerly, then compiled with the rewrite applied.

    The rewrite is kept only when the compiled outputs equal eager (``torch.testing.assert_close``
    tolerances) on every input set (at least two), their gradients too where ``entry`` trains
    (:func:`~nstviz.capture.grad_check.trains`), and ``explain``'s graph count on the first set
    goes down (never to 0: that is a frame Dynamo skipped); a frame that had no graph before
    (Dynamo skipped it, e.g. a break inside a ``for`` loop) and now compiles whole also counts. Nothing stays patched: the rewrite is undone and Dynamo's caches reset after.
    ``before``: the graph count of ``entry`` as written on the first input set, when the caller
    has it already (:func:`choose` counts it once for all its rewrites); counted here otherwise.
    """
    if len(input_sets) < 2:
        raise ValueError("verify needs at least two input sets (the observed one and another)")
    call = entry or original
    # each input set runs eagerly and compiled from the same RNG states (numpy's too): a random mask
    # drawn in the code is then the same mask in both
    start = rng_state()
    eager, eager_grads, with_grads = [], [], trains(call)
    for args in input_sets:
        set_rng_state(start)
        eager.append(call(*args))
        eager_grads.append(gradients_or_none(eager[-1]) if with_grads else None)
    try:
        if before is None:
            before = graph_count(call, input_sets[0])
        matches: list[bool] = []
        with rewrite.applied():
            # without an entry, the rewritten function itself (where it is looked up is the caller's)
            live = entry or rewrite.function
            after, after_breaks = _explain(live, input_sets[0])
            dynamo_reset()
            compiled = torch.compile(live, backend=backend)
            for args, want, want_grads in zip(input_sets, eager, eager_grads, strict=False):
                set_rng_state(start)
                try:
                    got = compiled(*args)
                    matches.append(_same(got, want))
                    if matches[-1] and (differs := gradients_changed(want_grads, got)):
                        return Verdict(False, before, after, matches, f"gradients differ from eager: {differs}")
                except Exception as e:  # a rewrite that fails to run is not kept
                    matches.append(False)
                    reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    return Verdict(False, before, after, matches, f"compiled run failed: {reason}")
    except Exception as e:
        return Verdict(False, -1, -1, [], f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    finally:
        set_rng_state(start)
        with contextlib.suppress(Exception):
            dynamo_reset()
    if not all(matches):
        return Verdict(False, before, after, matches, "outputs differ from eager")
    if after == 0:  # no graph at all: Dynamo skipped the frame, which then ran as Python
        return Verdict(False, before, after, matches, f"{before} -> 0 graphs: the frame runs eagerly now")
    if before == 0 and after_breaks == 0:
        return Verdict(True, before, after, matches,
                       f"0 -> {after} graphs: the frame ran eagerly before (Dynamo skipped it), now compiled whole")
    if after >= before:
        return Verdict(False, before, after, matches, f"graphs not fewer ({before} -> {after})")
    return Verdict(True, before, after, matches, f"{before} -> {after} graphs, outputs equal eager")


def choose(
    original: Callable[..., Any],
    rewrites: Sequence[Rewrite],
    input_sets: Sequence[Sequence[Any]],
    **kw: Any,
) -> tuple[Rewrite | None, list[Verdict]]:
    """Verify each rewrite; the kept one with the fewest graphs (the first on a tie).

    The code as written is explained by the first :func:`verify` only, not once per rewrite:
    nothing is patched between, so the count is the same; the later ones reuse it.
    """
    verdicts: list[Verdict] = []
    for r in rewrites:
        known = verdicts[0].graphs_before if verdicts and verdicts[0].graphs_before >= 0 else None
        verdicts.append(verify(original, r, input_sets, **(kw if known is None else {**kw, "before": known})))
    kept = [(v.graphs_after, i) for i, v in enumerate(verdicts) if v.kept]
    return (rewrites[min(kept)[1]] if kept else None), verdicts
