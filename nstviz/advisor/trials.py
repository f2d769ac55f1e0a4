"""What the advisor is given to try its candidates: the :class:`Trials` protocol.

The capture's :class:`nstviz.capture.trials.Trials` implements it (every member);
:func:`nstviz.advisor.search.run_advisor` builds one from plain callables (members it is not
given are None: that kind of attempt, or check, is not made).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from nstviz.capture.deadline import Deadline
from nstviz.capture.remedy import Mark
from nstviz.report import OutputCheck, Run

__all__ = ["Trials", "TryConfig", "TryMarks"]

TryMarks = Callable[[tuple[Mark, ...], str], tuple[Run, OutputCheck]]
"""Runs the code again with the marks as the run of the given name; the run and its output check."""
TryConfig = Callable[[tuple[Mark, ...], dict[str, bool], str], tuple[Run, OutputCheck]]
"""Like :data:`TryMarks`, with ``torch._dynamo.config`` flags patched for the run."""


class Trials(Protocol):
    """What the advisor is given to try its candidates: one attempt -> one Run.

    Attributes:
        resolve: maps a name (``"helper"``, ``"Block.stats"``, ``"pkg.mod.helper"``) to the
            object it names in the user's namespace, or None.
        try_marks: runs the code again with the given marks (functions, adapters, pytree
            classes, rewrites) as a run of the given name (``"attempt-1"``); returns the run and
            its output check against the baseline.
        try_config: like ``try_marks`` with ``torch._dynamo.config`` flags set; None: the flags
            the breaks hint at are not tried.
        adapt: ``adapt(qualname, function, caller_files)`` makes an adapter for a function
            refused for ``None`` inputs (:mod:`nstviz.capture.adapters`), or None when it
            cannot be placed; None: no adapters are tried.
        register: ``register(class_name, function)`` gives the user class a failed attempt was
            refused for ("(it got X)"), to register with pytree, or None when X is not a user
            class; None: no registrations are tried.
        decorator: how the pasted code spells nonstrict_trace.
        none_inputs_ok: the torch takes ``None`` leaves as nonstrict_trace inputs, so an
            explicit ``None`` at a call site is no reason to refuse or adapt a candidate.
        other_inputs: ``other_inputs(marks, flags) -> (match, why)``, the rewrites' outputs on
            other inputs of the same shapes; None: no source rewrites are tried.
        run_eager: runs the code eagerly on its input sets (False when it cannot): a break in a
            C call then gets a custom-op rewrite, its fake built from the recorded calls; None:
            no custom ops.
        graphs_elsewhere: ``graphs_elsewhere(marks, flags) -> graphs`` Dynamo graphs of one
            call on another input set and random state with ``marks`` and ``flags`` (none: the
            code as written), the exception the call raised, or None (no count); with
            ``given_inputs=True`` on the inputs given; None: not checked.
        time_attempt: ``time_attempt(marks, flags, run_name)`` times an attempt now (its Run,
            timed, or None); None: tied sets are not told apart by time.
        deadline: the capture's one :class:`~nstviz.capture.deadline.Deadline`, shared with
            the trials' own extra runs and the final run; None: the search makes its own.
    """

    decorator: str
    none_inputs_ok: bool

    resolve: Callable[[str], Callable | None]
    try_marks: TryMarks
    try_config: TryConfig | None
    adapt: Callable[[str, Callable, Sequence[str]], Any] | None
    register: Callable[[str, Callable], Any] | None
    other_inputs: Callable[..., tuple[bool | None, str]] | None
    run_eager: Callable[[], bool] | None
    graphs_elsewhere: Callable[..., int | Exception | None] | None
    time_attempt: Callable[[tuple[Mark, ...], dict[str, bool], str], Run | None] | None
    deadline: Deadline | None
