"""One advisor attempt: a candidate being built (where, why, its breaks) and what trying it applies.

:func:`nstviz.advisor.propose.plan_candidates` makes them (``kind="nonstrict"``: mark the
function), :func:`nstviz.advisor.precheck.precheck` fills in what resolving the name found; the
search derives the other kinds from them: an ``"adapter"`` for a function refused for ``None``
inputs, a ``"pytree"`` registration of a user class an attempt was refused for, and
``"rewrite"`` attempts (:mod:`nstviz.advisor.rewriting`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from nstviz.capture.remedy import Mark
from nstviz.report import Location

__all__ = ["Attempt", "AttemptKind"]

AttemptKind = Literal["nonstrict", "adapter", "pytree", "rewrite"]
"""What an attempt applies: a mark, an adapter (its inner function marked), a pytree registration
(with the marks in ``with_marks``) or a source rewrite. Config flags are tried apart
(:mod:`nstviz.advisor.config_trials`)."""


@dataclass
class Attempt:
    """A candidate being built and tried: where it is, why, the breaks it contains, what it applies."""

    name: str
    """The name passed to ``resolve`` (``"helper"``, ``"Block.stats"``)."""
    frame: Location
    reasons: list[str] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)
    """Ids (:attr:`Break.id`) of the breaks whose stack contains this function."""
    break_gb_ids: list[str | None] = field(default_factory=list)
    """The GB ids of those breaks."""
    depth: int = 0
    """0 = the function that contains the break, 1 = its caller..."""
    obj: Callable | None = None
    problems: list[str] = field(default_factory=list)
    order: int = 0
    callers: list[Location] = field(default_factory=list)
    """Frames that call it on the break stacks (their line is the call site)."""
    notes: list[str] = field(default_factory=list)
    """Warnings that do not stop it from being tried (e.g. values it reads that get baked in)."""
    module: str | None = None
    """The module path prefixed to ``name`` when only the qualified path resolved."""
    region_functions: set[str] = field(default_factory=set)
    """Functions running inside the compiled region on its break stacks."""
    forward: bool = False
    """An ``nn.Module.forward``: the mark needs a forward pre-hook to take effect."""
    none_args: bool = False
    """Rejected only because a call site passes an explicit ``None`` (an adapter can take it)."""
    kind: AttemptKind = "nonstrict"
    """``"nonstrict"``: mark ``obj``; ``"adapter"``: install ``remedy`` (an adapter that drops
    None arguments); ``"pytree"``: mark ``with_marks`` with ``remedy`` (a user class) registered;
    ``"rewrite"``: apply ``remedy`` (a source rewrite)."""
    remedy: Mark | None = None
    with_marks: tuple[Mark, ...] = ()
    """For a pytree attempt: what is marked (or installed) with the class registered."""
    key: str = ""
    """The candidate's name in the results (``adapter: f``, ``pytree: C``); ``name`` when empty."""
    replaces: Attempt | None = None
    """A kept mark this adapter is tried instead of (the mark itself fell back on None inputs)."""
    via_adapter: bool = False
    """A pytree attempt on top of this function's adapter (the adapter got the class)."""

    @property
    def result_key(self) -> str:
        """The candidate's name in the results: ``key``, else ``name``."""
        return self.key or self.name

