"""Remedies other than nonstrict_trace that a break's own hints name: config flags.

Dynamo's data-dependent breaks (``Tensor.item()``, ``nonzero``, data-dependent operators)
say which ``torch._dynamo.config`` flag would capture them: ``capture_scalar_outputs`` or
``capture_dynamic_output_shape_ops``. nonstrict_trace cannot trace those operations either,
so the advisor tries the hinted flags as attempts of their own (outputs checked like any
other attempt) and shows them beside the nonstrict ones, with the exact code.

A frame that hit ``recompile_limit`` runs eagerly from then on; its cause is the guard that kept
failing (the recompile reason Dynamo logged, :func:`recompile_causes`). When that guard is on a
tensor size, ``automatic_dynamic_shapes`` (what ``dynamic=None`` does: a size that changed is
compiled as dynamic) is tried as an attempt (:func:`recompile_plans`), kept only when it lowers
the graph count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from nstviz.passes.failures import recompile_limit_hits
from nstviz.report import Break, Run

__all__ = ["CONFIG_FLAGS", "config_code", "config_plans", "flags_hinted", "recompile_causes", "recompile_plans", "recompile_text"]

_SIZE_GUARD = re.compile(r"size mismatch at index|stride mismatch at index|\.size\(\)\[\d+\]|\.shape\[\d+\]")
DYNAMIC_FLAG = "automatic_dynamic_shapes"

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


def recompile_causes(run: Run) -> list[tuple[str, str]]:
    """``(function, failing guard)`` for each frame of ``run`` that hit ``recompile_limit``.

    The guard is the last recompile reason Dynamo logged for the frame (``"tensor 'x' size
    mismatch at index 0. expected 8, actual 9"``), without its ``frame/compile:`` prefix.
    """
    out: list[tuple[str, str]] = []
    for hit in recompile_limit_hits(run):
        same = [c for c in run.compiles if c.frame_id == hit.frame_id]
        reasons = [c.recompile_reason for c in same if c.recompile_reason]
        name = next((c.function for c in same if c.function), "") or f"frame {hit.frame_id}"
        last = reasons[-1].splitlines()[0] if reasons else "no recompile reason logged"
        out.append((name, re.sub(r"^\d+/\d+:\s*", "", last)))
    return out


def recompile_plans(run: Run, already: Sequence[str] = ()) -> list[tuple[str, ...]]:
    """``automatic_dynamic_shapes`` when a frame hit ``recompile_limit`` on a size guard (else nothing)."""
    if DYNAMIC_FLAG in already:
        return []
    return [(DYNAMIC_FLAG,)] if any(_SIZE_GUARD.search(g) for _, g in recompile_causes(run)) else []


def recompile_text(run: Run) -> str:
    """``"step hit the recompile limit: tensor 'x' size mismatch ..."`` for the frames of ``run``."""
    return "; ".join(f"{f} hit the recompile limit, failing guard: {g}" for f, g in recompile_causes(run))
