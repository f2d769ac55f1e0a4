"""A mixture-of-experts loop over the experts ``nonzero`` finds: transformers' own switch to batched experts.

transformers 5.x decorates its experts modules (Mixtral, Qwen2/3-MoE, OLMoE, GPT-OSS, PhiMoE,
DeepSeek-V3, ...) with ``use_experts_implementation``: ``forward`` dispatches on
``config._experts_implementation`` to the class's own Python loop (``"eager"``: ``for expert_idx in
expert_hit: ... torch.where(expert_mask[expert_idx])``, a dynamic shape per expert, GB0036, one
graph break per layer) or to ``"grouped_mm"`` / ``"batched_mm"`` (every routed token at once, no
data-dependent shape). ``capture_dynamic_output_shape_ops`` lowers Dynamo's counter there but not
the number of graphs; the switch compiles the layer whole. The remedy is that config, paste-ready:
``model.set_experts_implementation("grouped_mm")`` (or ``experts_implementation="grouped_mm"``
when the model is built or loaded). Applied live, the experts class dispatches to that function
while the block runs (what the config selects for every instance), and is restored after.

``grouped_mm`` computes only the routed (token, expert) pairs (the eager loop's FLOPs; on CPU it is
transformers' fallback op); ``batched_mm`` gathers one expert weight per routed pair (more memory).
Neither is the dense form (every expert on every token), which would cost ``num_experts / top_k``
times the expert compute.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite
from nstviz.advisor.rewrites._source import RewriteError, raw_function
from nstviz.advisor.rewrites.buffers import owner_class

__all__ = ["ExpertsSwitch", "experts_interface", "propose_experts_implementation"]

IMPLEMENTATIONS = ("grouped_mm", "batched_mm")


@dataclass
class ExpertsSwitch(Rewrite):
    """The experts class dispatching to another implementation while applied (its ``forward`` swapped back after)."""

    owner: type | None = None
    implementation: str = ""

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block with the class's ``forward`` calling ``function`` (the chosen implementation)."""
        assert self.owner is not None
        old = self.owner.__dict__["forward"]
        impl = self.function

        def forward(module: Any, *args: Any, **kwargs: Any) -> Any:
            return impl(module, *args, **kwargs)

        forward.__qualname__ = f"{self.owner.__qualname__}.forward"
        self.owner.forward = forward  # type: ignore[method-assign]
        try:
            yield
        finally:
            self.owner.forward = old  # type: ignore[method-assign]


def experts_interface(cls: type) -> tuple[Any, types.FunctionType] | None:
    """``(interface, eager forward)`` when ``cls.forward`` is transformers' ``use_experts_implementation`` dispatch."""
    fwd = cls.__dict__.get("forward")
    if not isinstance(fwd, types.FunctionType):
        return None
    cells = dict(zip(fwd.__code__.co_freevars, fwd.__closure__ or (), strict=False))
    if "experts_interface" not in cells or "original_forward" not in cells:
        return None
    try:
        iface, original = cells["experts_interface"].cell_contents, cells["original_forward"].cell_contents
    except ValueError:
        return None
    if not callable(getattr(iface, "get_interface", None)):
        return None
    return iface, original


def propose_experts_implementation(fn: object, brk: BreakSite | None = None) -> Proposal:
    """Transformers' ``grouped_mm`` then ``batched_mm`` experts, for a break in an eager experts loop."""
    out = Proposal()
    cls = owner_class(fn)
    found = experts_interface(cls) if cls is not None else None
    if cls is None or found is None:
        out.notes.append("not a transformers experts module (no use_experts_implementation dispatch)")
        out.fits = False
        return out
    iface, original = found
    try:
        raw = raw_function(fn)
    except RewriteError as e:
        out.notes.append(str(e))
        return out
    if raw is not original and raw is not cls.__dict__["forward"]:
        out.notes.append(f"{raw.__qualname__} is not {cls.__qualname__}'s eager experts forward")
        return out
    gb = f" ({brk.gb_id})" if brk and brk.gb_id else ""
    for name in IMPLEMENTATIONS:
        if name not in iface:
            continue
        impl: Callable[..., Any] = iface.get_interface(name, original)
        cost = ("the routed (token, expert) pairs only, as the loop" if name == "grouped_mm"
                else "one gathered expert weight per routed pair (more memory)")
        out.rewrites.append(ExpertsSwitch(
            remedy="experts-implementation",
            description=f"{cls.__qualname__}: experts_implementation={name!r} instead of the eager loop over the "
                        f"experts nonzero finds (computes {cost})",
            source=(f"# nstviz: {cls.__name__}'s eager loop over the experts `nonzero` finds has data-dependent "
                    f"shapes{gb}; transformers runs the experts batched with its experts_implementation switch.\n"
                    f"# After building or loading `model` (or pass experts_implementation={name!r} to from_pretrained "
                    f"or the config):\n"
                    f"model.set_experts_implementation({name!r})\n"),
            original=original,
            function=impl,
            owner=cls,
            implementation=name,
        ))
    return out
