"""The capture options, checked once for the API, the CLI and the ``%%nstrace`` magic.

:func:`check_capture_options` refuses a bad value before any run starts, naming the option
the way the caller spells it: ``budget_s=-1`` for :func:`nstviz.compare`, ``--budget -1``
for the ``nstviz`` command and the magic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from nstviz.errors import UsageError

BaselineMode = Literal["as_written", "strict"]
BASELINE_MODES: tuple[str, ...] = ("as_written", "strict")

DEFAULT_BUDGET_S = 60.0
"""The advisor's time budget, in seconds, when none is given."""
DEFAULT_MAX_ATTEMPTS = 8
"""The advisor's attempt budget when none is given."""

Spelling = Literal["api", "flag"]
_FLAGS: Mapping[str, str] = {
    "budget_s": "--budget",
    "max_attempts": "--max-attempts",
    "backend": "--backend",
    "baseline": "--baseline",
    "auto": "--auto",
}


def _named(option: str, value: Any, spelling: Spelling) -> str:
    if spelling == "flag":
        return f"{_FLAGS[option]} {value}"
    return f"{option}={value!r}"


def check_capture_options(
    *,
    auto: bool,
    backend: Any,
    baseline: Any,
    budget_s: Any = None,
    max_attempts: Any = None,
    spelling: Spelling = "api",
) -> None:
    """Refuse bad capture options with a message naming the option and the value.

    Args:
        auto: whether the advisor runs.
        backend: a backend name or a callable backend.
        baseline: ``"as_written"`` or ``"strict"``.
        budget_s: the advisor's time budget in seconds (None: not given).
        max_attempts: the advisor's attempt budget (None: not given).
        spelling: ``"api"`` (``budget_s=-1``) or ``"flag"`` (``--budget -1``); with
            ``"flag"``, the advisor's budgets given without ``--auto`` are refused too.

    Raises:
        UsageError: naming the first bad option, its value and what is allowed.
    """
    if baseline not in BASELINE_MODES:
        raise UsageError(f"{_named('baseline', baseline, spelling)}: baseline must be 'as_written' or 'strict'")
    if not (isinstance(backend, str) and backend) and not callable(backend):
        raise UsageError(
            f"{_named('backend', backend, spelling)}: backend must be a backend name (e.g. 'record', "
            "'inductor') or a callable"
        )
    if budget_s is not None and not (
        isinstance(budget_s, (int, float)) and not isinstance(budget_s, bool) and budget_s > 0
    ):
        raise UsageError(
            f"{_named('budget_s', budget_s, spelling)}: the advisor's time budget must be a positive "
            "number of seconds"
        )
    if max_attempts is not None and not (
        isinstance(max_attempts, int) and not isinstance(max_attempts, bool) and max_attempts >= 1
    ):
        raise UsageError(f"{_named('max_attempts', max_attempts, spelling)}: must be a whole number, at least 1")
    if spelling == "flag" and not auto and (budget_s is not None or max_attempts is not None):
        raise UsageError("--budget and --max-attempts bound the advisor; they only apply with --auto")


__all__ = [
    "BASELINE_MODES",
    "DEFAULT_BUDGET_S",
    "DEFAULT_MAX_ATTEMPTS",
    "BaselineMode",
    "check_capture_options",
]
