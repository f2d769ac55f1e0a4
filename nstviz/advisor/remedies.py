"""Remedies other than nonstrict_trace that a break's own hints name: config flags.

Dynamo's data-dependent breaks (``Tensor.item()``, ``nonzero``, data-dependent operators)
say which ``torch._dynamo.config`` flag would capture them: ``capture_scalar_outputs`` or
``capture_dynamic_output_shape_ops``. nonstrict_trace cannot trace those operations either,
so the advisor tries the hinted flags as attempts of their own (outputs checked like any
other attempt) and shows them beside the nonstrict ones, with the exact code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nstviz.report import Break

__all__ = ["CONFIG_FLAGS", "config_code", "config_plans", "flags_hinted"]

CONFIG_FLAGS = ("capture_scalar_outputs", "capture_dynamic_output_shape_ops")

_BY_GB = {
    "GB0124": "capture_scalar_outputs",  # Tensor.item() with capture_scalar_outputs=False
    "GB0033": "capture_scalar_outputs",  # data-dependent operator (aten._local_scalar_dense)
    "GB0036": "capture_dynamic_output_shape_ops",  # dynamic shape operator (nonzero, ...)
}


def flags_hinted(b: Break) -> tuple[str, ...]:
    """The config flags a break's hints, message or registry id point to."""
    text = " ".join((*b.hints, b.reason or "", b.detail or ""))
    found = [f for f in CONFIG_FLAGS if f in text]
    if b.gb_id in _BY_GB and _BY_GB[b.gb_id] not in found:
        found.append(_BY_GB[b.gb_id])
    if "nonzero" in text and "capture_dynamic_output_shape_ops" not in found and "Dynamic shape operator" in text:
        found.append("capture_dynamic_output_shape_ops")
    return tuple(found)


def config_plans(breaks: Iterable[Break], already: Sequence[str] = ()) -> list[tuple[str, ...]]:
    """Flag sets to try, most-hinted single flags first, then all hinted flags together."""
    weight: dict[str, int] = {}
    for b in breaks:
        for f in flags_hinted(b):
            if f not in already:
                weight[f] = weight.get(f, 0) + max(b.count, 1)
    singles = sorted(weight, key=lambda f: (-weight[f], CONFIG_FLAGS.index(f)))
    plans = [(f,) for f in singles]
    if len(singles) > 1:
        plans.append(tuple(sorted(singles, key=CONFIG_FLAGS.index)))
    return plans


def config_code(flags: Iterable[str]) -> str:
    """``torch._dynamo.config.<flag> = True`` lines, with the import."""
    lines = ["import torch", *(f"torch._dynamo.config.{f} = True" for f in flags)]
    return "\n".join(lines) + "\n"
