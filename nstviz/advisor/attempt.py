"""One advisor attempt: a candidate being built (where, why, its breaks) and what trying it applies.

Each kind is a class of its own (:data:`AnyAttempt`), told apart by its ``kind`` Literal:
:func:`nstviz.advisor.propose.plan_candidates` makes :class:`MarkAttempt` s (mark the function)
and :func:`nstviz.advisor.precheck.precheck` fills in what resolving the name found; the search
derives the others from them (:func:`derive`): an :class:`AdapterAttempt` for a function refused
for ``None`` inputs, a :class:`PytreeAttempt` registering a user class an attempt was refused
for, and :class:`RewriteAttempt` s (:mod:`nstviz.advisor.rewriting`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar

from nstviz.capture.adapters import Adapter, PytreeType
from nstviz.capture.remedy import Mark, Remedy
from nstviz.report import Location

__all__ = [
    "AdapterAttempt", "AnyAttempt", "Attempt", "AttemptKind", "MarkAttempt", "PytreeAttempt", "RewriteAttempt", "derive",
]

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
    """What trying it applies; each kind is its own class (:data:`AnyAttempt`)."""
    key: str = ""
    """The candidate's name in the results (``adapter: f``, ``pytree: C``); ``name`` when empty."""

    @property
    def result_key(self) -> str:
        """The candidate's name in the results: ``key``, else ``name``."""
        return self.key or self.name

    @property
    def replaced(self) -> MarkAttempt | None:
        """The kept mark this attempt is tried instead of (only an adapter replaces one)."""
        return None

    @property
    def through_adapter(self) -> bool:
        """Whether the function is traced through its adapter (an adapter, or a pytree attempt on top of one)."""
        return False


@dataclass
class MarkAttempt(Attempt):
    """Mark ``obj`` non-strict (as proposed and pre-checked)."""

    kind: Literal["nonstrict"] = "nonstrict"


@dataclass
class AdapterAttempt(Attempt):
    """Install ``remedy``, an adapter that drops ``None`` arguments, and mark its inner function."""

    kind: Literal["adapter"] = "adapter"
    remedy: Adapter | None = None
    """Made when the attempt is about to run (None until then)."""
    replaces: MarkAttempt | None = None
    """A kept mark this adapter is tried instead of (the mark itself fell back on None inputs)."""

    @property
    def replaced(self) -> MarkAttempt | None:
        """The kept mark this adapter is tried instead of, if any."""
        return self.replaces

    @property
    def through_adapter(self) -> bool:
        """Always: the function is traced through this adapter."""
        return True


@dataclass
class PytreeAttempt(Attempt):
    """Register ``remedy`` (a user class) with pytree, and apply ``with_marks``."""

    kind: Literal["pytree"] = "pytree"
    remedy: PytreeType | None = None
    with_marks: tuple[Mark, ...] = ()
    """What is marked (or installed) with the class registered."""
    via_adapter: bool = False
    """On top of this function's adapter (the adapter got the class)."""

    @property
    def through_adapter(self) -> bool:
        """When the class is registered on top of the function's adapter."""
        return self.via_adapter


@dataclass
class RewriteAttempt(Attempt):
    """Apply ``remedy``, a source rewrite of the function, around the run."""

    kind: Literal["rewrite"] = "rewrite"
    remedy: Remedy | None = None


AnyAttempt = MarkAttempt | AdapterAttempt | PytreeAttempt | RewriteAttempt
"""An attempt of any kind: tell them apart by ``kind`` (or ``isinstance``)."""

_Derived = TypeVar("_Derived", bound=Attempt)


def derive(cls: type[_Derived], p: Attempt, **changes: Any) -> _Derived:
    """An attempt of another kind made from ``p``: its common fields copied, ``changes`` on top."""
    common = {f.name: getattr(p, f.name) for f in fields(Attempt) if f.name != "kind"}
    return cls(**{**common, **changes})

