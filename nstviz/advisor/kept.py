"""The advisor's kept set: what an attempt passes to ``try_marks``, and what a Recommendation lists."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from nstviz.capture.remedy import Mark

if TYPE_CHECKING:
    from nstviz.advisor.attempt import Attempt


def marks_of(p: Attempt) -> tuple[Mark, ...]:
    """What an attempt passes to ``try_marks`` for one proposal."""
    if p.kind in ("adapter", "rewrite"):
        return (p.remedy,)
    if p.kind == "pytree":
        return (*p.with_marks, p.remedy)
    return (p.obj,) if p.obj is not None else ()


def marks(kept: Sequence[Attempt]) -> tuple[Mark, ...]:
    """What an attempt passes to ``try_marks`` for the kept set (each object once)."""
    out: list[Mark] = []
    for k in kept:
        out += [m for m in marks_of(k) if not any(m is x for x in out)]
    return tuple(out)


def functions(kept: Sequence[Attempt]) -> tuple[tuple[str, Callable], ...]:
    """The recommended functions (as ``Recommendation.functions`` names them) and their objects."""
    return tuple(
        (k.name, k.obj) for k in kept if k.kind not in ("adapter", "rewrite") and not k.through_adapter and k.obj is not None
    )


def remedies(kept: Sequence[Attempt]) -> tuple[Mark, ...]:
    """The adapters and pytree classes of the kept set, in ``Recommendation`` order."""
    ads = [k.remedy if k.kind == "adapter" else k.with_marks[0] for k in kept if k.through_adapter]
    return (*ads, *(k.remedy for k in kept if k.kind in ("pytree", "rewrite")))


__all__ = ["functions", "marks", "marks_of", "remedies"]
