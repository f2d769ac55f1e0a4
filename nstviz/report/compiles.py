"""What Dynamo recorded for one compile of one frame: :class:`Compile` (tlparse's compile page).

Filled from torch's structured trace by :mod:`nstviz.tracing.breaks` and
:mod:`nstviz.tracing.recompiles`, live or from a log. :data:`RECOMPILE_LIMIT_RE` is the one test
of a compile refused at ``recompile_limit`` (:attr:`Compile.limit_hit`, read by the headline too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nstviz.report.compile_id import CompileId
from nstviz.report.location import Location

__all__ = ["RECOMPILE_LIMIT_RE", "Compile", "GuardFailure"]

_FRZ = {"frozen": True, "slots": True, "kw_only": True}

RECOMPILE_LIMIT_RE = re.compile(r"recompile limit exceeded|exceeding the \w*recompile_limit", re.IGNORECASE)
"""A compile refused for hitting ``recompile_limit``: the frame runs eagerly, it is not a break."""


@dataclass(**_FRZ)
class GuardFailure:
    """A guard of the frame's earlier compile ``compile_id`` that failed: why the frame recompiled.

    What ``TORCH_LOGS=recompiles`` lists under "triggered by the following guard failure(s)":
    ``guard`` is the expression (``"n == 1"``, ``"tensor 'x' size mismatch at index 0. expected 3,
    actual 4"``), ``code`` the user line that installed it, ``location`` where that line is.
    """

    compile_id: CompileId | None
    """The earlier compile whose guard failed (None where torch's text did not name it)."""
    guard: str
    code: str | None = None
    location: Location | None = None
    text: str = ""
    """The failure as torch wrote it (with its user stack)."""

    def __post_init__(self) -> None:
        if isinstance(self.compile_id, str):  # written by hand as text
            object.__setattr__(self, "compile_id", CompileId.coerce(self.compile_id) if self.compile_id else None)


@dataclass(**_FRZ)
class Compile:
    """One Dynamo compile of one frame (tlparse's ``[frame_id/compile_id]``, ``_attempt``).

    The fields from ``guard_failures`` on came later: Reports made before have none of them.
    """

    frame_id: int
    compile_id: int
    attempt: int = 0
    function: str = ""
    location: Location | None = None
    compile_time_s: float | None = None
    graph_ids: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()
    recompile_reason: str | None = None
    """The first failing guard as ``compilation_metrics`` holds it (all of them: :attr:`guard_failures`)."""
    restart_reasons: tuple[str, ...] = ()
    fail_reason: str | None = None
    guard_failures: tuple[GuardFailure, ...] = ()
    """Why this compile happened: each failing guard of the frame's earlier compiles, as torch
    logged them (``recompile_reasons``); empty for a frame's first compile."""
    fail_type: str | None = None
    """The exception type of a failed compile (``"Unsupported"``)."""
    fail_location: Location | None = None
    """The user frame where the compile failed (``fail_user_frame_filename``/``_lineno``)."""
    backend_compile_time_s: float | None = None
    """Of :attr:`compile_time_s`, the time spent in the backend (AOTAutograd, Inductor)."""
    guard_count: int | None = None
    """Guards Dynamo installed (:attr:`guards` keeps the first lines of their text only)."""
    cache_size: int | None = None
    """Compiled entries the frame already had when this compile started (0 for its first)."""
    stack: tuple[Location, ...] = ()
    """The user frames that called the compiled frame (``dynamo_start``), outermost first."""
    qualname: str | None = None
    """The frame's function qualified where its source tells (``"GPT2Block.forward"``); a Dynamo
    resume function (``torch_dynamo_resume_in_f_at_7``) is named by the function it resumes."""

    recompile: bool = field(init=False, default=False, metadata={"derived": True})
    """Derived: the frame had compiled before and a guard failed (it has guard failures or a reason)."""
    limit_hit: bool = field(init=False, default=False, metadata={"derived": True})
    """Derived: refused because the frame hit ``recompile_limit``; it runs eagerly from then on."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "recompile", bool(self.guard_failures or self.recompile_reason))
        object.__setattr__(self, "limit_hit", bool(self.fail_reason and RECOMPILE_LIMIT_RE.search(self.fail_reason)))

    @property
    def cid(self) -> CompileId:
        """This compile's :class:`CompileId` (its frame, compile and attempt)."""
        return CompileId(frame_id=self.frame_id, frame_compile_id=self.compile_id, attempt=self.attempt)

    @property
    def tlparse_id(self) -> str:
        """``"1/0"``, or ``"1/0_1"`` for attempt 1, as tlparse writes it."""
        return self.cid.text
