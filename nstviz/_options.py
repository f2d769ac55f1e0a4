"""The capture options: one list, with their checks and their flag spellings.

:class:`CaptureOptions` holds the options of one capture (what :func:`nstviz.compare` and
:func:`nstviz.trace_code` take as keyword arguments). :data:`FLAGS` spells each option as a
command-line flag; the ``nstviz`` command's parsers and the ``%%nstrace`` magic's are built from
it (:func:`flag_arguments`), and :meth:`CaptureOptions.from_flags` reads the parsed flags back.

:func:`check_capture_options` refuses a bad value before any run starts, naming the option
the way the caller spells it: ``budget_s=-1`` for :func:`nstviz.compare`, ``--budget -1``
for the ``nstviz`` command and the magic. Torch-free.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from nstviz.errors import UsageError

BaselineMode = Literal["as_written", "strict"]
BASELINE_MODES: tuple[str, ...] = ("as_written", "strict")

DEFAULT_BACKEND = "record"
"""The backend a capture records with when none is given."""
DEFAULT_BUDGET_S = 60.0
"""The advisor's time budget, in seconds, when none is given and one run of the code is short."""
DEFAULT_BUDGET_RUNS = 6
"""When none is given, the advisor's time budget is at least this many runs of the code."""


def default_budget_s(run_s: float) -> float:
    """The advisor's time budget when none is given: 60 s, or six runs of the code when that is longer.

    One attempt costs a run, its check on other inputs another, the final run a third and the
    recommendation's last check (a compile as ``torch._dynamo.explain`` makes it) a fourth: a flat
    60 s leaves a model whose one run takes 30 s (an object detector with its loss) no attempt.
    """
    return float(max(DEFAULT_BUDGET_S, round(DEFAULT_BUDGET_RUNS * run_s)))
DEFAULT_MAX_ATTEMPTS = 8
"""The advisor's attempt budget when none is given."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CaptureOptions:
    """The options of one capture, as :func:`nstviz.compare` and :func:`nstviz.trace_code` take them.

    Attributes:
        nonstrict: functions to trace non-strictly (callables, names, dotted paths).
        auto: let the advisor find functions to mark.
        backend: ``"record"``, ``"inductor"``, ``"as_written"``, a backend name or a callable.
        baseline: ``"as_written"``, or ``"strict"`` (the code's own ``nonstrict_trace`` marks
            lifted in the baseline).
        check: compare the runs' outputs.
        budget_s: the advisor's time budget, in seconds; None: :func:`default_budget_s` of the
            baseline run's time.
        max_attempts: the advisor's attempt budget.
        echo: let the printed output of each run through to the real stdout/stderr.
        time: time the baseline, the nonstrict run and each advisor attempt (graphs, compile
            time, steady-state time per call, eager alongside: :attr:`nstviz.report.Run.timing`).
            :func:`nstviz.compare` times by default; code (``trace_code``, the magic, the CLI)
            only when asked, and then re-runs only the compiled calls the code made.
    """

    nonstrict: Iterable[Any] = ()
    auto: bool = False
    backend: Any = DEFAULT_BACKEND
    baseline: BaselineMode = "as_written"
    check: bool = True
    budget_s: float | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    echo: bool = False
    time: bool = False

    def checked(self) -> CaptureOptions:
        """These options, after :func:`check_capture_options` (API spelling: ``budget_s=-1``).

        Raises:
            UsageError: naming the first bad option.
        """
        check_capture_options(
            auto=self.auto,
            backend=self.backend,
            baseline=self.baseline,
            budget_s=self.budget_s,
            max_attempts=self.max_attempts,
            time=self.time,
        )
        return self

    def as_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`nstviz.trace_code` (and :func:`nstviz.compare`)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_flags(cls, parsed: Any) -> CaptureOptions:
        """The options of a parsed command line (argparse namespace) built with :func:`flag_arguments`.

        Flags the parser did not have take their defaults. The values are checked as given,
        in flag spelling (``--budget -1``); the advisor's budgets without ``--auto`` are refused.

        Raises:
            UsageError: naming the first bad flag.
        """
        given: dict[str, Any] = {}
        for flag in FLAGS:
            value = getattr(parsed, flag.dest, None)
            if value is not None:
                given[flag.option] = flag.read(value)
        check_capture_options(
            auto=given.get("auto", False),
            backend=given.get("backend", DEFAULT_BACKEND),
            baseline=given.get("baseline", "as_written"),
            budget_s=given.get("budget_s"),
            max_attempts=given.get("max_attempts"),
            spelling="flag",
        )
        return cls(**given)


def split_names(values: Iterable[str] | None) -> tuple[str, ...]:
    """Names given as repeated or comma-separated flags (``--nonstrict a,b -n c``), in order, without repeats."""
    names: list[str] = []
    for value in values or ():
        names.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(dict.fromkeys(names))


FrontEnd = Literal["cli", "record", "demo", "magic"]
"""Who parses the flags: ``nstviz run``/``check`` (``"cli"``), ``nstviz record``, ``nstviz demo``, the magic."""


@dataclasses.dataclass(frozen=True, slots=True)
class Flag:
    """How one capture option is spelled on a command line.

    Attributes:
        option: the :class:`CaptureOptions` field.
        flag: the long flag (``--budget``); its argparse ``dest`` is :attr:`dest`.
        short: a short alias for the ``nstviz`` command (``-n``), or ``""``.
        argparse: the ``add_argument`` keywords every front end shares (``action``, ``type``, ...).
        help: the help text by front end (``"cli"``, ``"magic"``; ``"record"``/``"demo"``
            fall back on ``"cli"``); a front end without an entry (and no fallback) lacks the flag.
        read: turns the parsed value (not None) into the option's value.
        front_ends: the front ends that have the flag.
    """

    option: str
    flag: str
    short: str = ""
    argparse: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    help: Mapping[str, str] = dataclasses.field(default_factory=dict)
    read: Callable[[Any], Any] = lambda value: value
    front_ends: frozenset[str] = frozenset({"cli", "magic"})

    @property
    def dest(self) -> str:
        """The attribute argparse stores the flag under (``--max-attempts``: ``max_attempts``)."""
        return self.flag.lstrip("-").replace("-", "_")


FLAGS: tuple[Flag, ...] = (
    Flag(
        "nonstrict",
        "--nonstrict",
        short="-n",
        argparse={"action": "append"},
        help={
            "cli": "function to trace with nonstrict_trace: a name, a dotted path (mod.fn, Class.method); "
            "repeat or separate with commas",
            "record": "function to trace non-strictly (repeat or comma-separate)",
            "magic": "Functions to trace with torch._dynamo.nonstrict_trace in the second run: names in "
            "the notebook, dotted paths ('mymod.helper', 'Block.stats', 'model.blocks.0.norm_stats'). "
            "Repeat the option or separate names with commas.",
        },
        read=split_names,
        front_ends=frozenset({"cli", "record", "magic"}),
    ),
    Flag(
        "auto",
        "--auto",
        argparse={"action": "store_true"},
        help={
            "cli": "let the advisor find the functions to mark",
            "magic": "Let nstviz find the functions to mark: it proposes candidates from the baseline's "
            "graph breaks and tries them (the cell then runs once more per attempt).",
        },
    ),
    Flag(
        "backend",
        "--backend",
        argparse={"default": DEFAULT_BACKEND},
        help={
            "cli": "backend to record with: record (default), inductor, or a name",
            "magic": "torch.compile backend for both runs: 'record' (default, fast: records the Dynamo and "
            "ATen graphs without generating code), 'inductor' (slower, adds inductor's graphs), "
            "'as_written' (each compiled object's own backend) or any registered backend name.",
        },
        front_ends=frozenset({"cli", "record", "demo", "magic"}),
    ),
    Flag(
        "baseline",
        "--baseline",
        argparse={"choices": BASELINE_MODES},
        help={
            "cli": "strict: run the baseline with the script's own nonstrict_trace marks lifted",
            "magic": "What the first run is: the code as written (default), or 'strict' to lift "
            "nonstrict_trace marks already in the code, to see what they buy you.",
        },
    ),
    Flag(
        "check",
        "--no-check",
        argparse={"action": "store_true"},
        help={
            "cli": "skip the output check",
            "magic": "Skip the output check (comparing the tensors each run produced).",
        },
        read=lambda skip: not skip,
    ),
    Flag(
        "budget_s",
        "--budget",
        argparse={"type": float, "metavar": "SECONDS"},
        help={
            "cli": f"advisor time budget (default {DEFAULT_BUDGET_S:g} s, or {DEFAULT_BUDGET_RUNS} runs of the code when longer)",
            "magic": f"With --auto: stop trying candidates after this many seconds (default {DEFAULT_BUDGET_S:g}, "
            f"or {DEFAULT_BUDGET_RUNS} runs of the code when one run is longer than {DEFAULT_BUDGET_S / DEFAULT_BUDGET_RUNS:g} s).",
        },
    ),
    Flag(
        "max_attempts",
        "--max-attempts",
        argparse={"type": int, "metavar": "N"},
        help={
            "cli": "advisor attempt limit",
            "magic": f"With --auto: try at most N candidates (default {DEFAULT_MAX_ATTEMPTS}).",
        },
    ),
    Flag(
        "echo",
        "--show-output",
        argparse={"action": "store_true"},
        help={"cli": "let the script's printed output through"},
        read=bool,
        front_ends=frozenset({"cli"}),
    ),
    Flag(
        "time",
        "--time",
        argparse={"action": "store_true"},
        help={
            "cli": "time each run: graphs, compile time, steady-state time per call, eager alongside "
            "(re-runs only the compiled calls the script made)",
            "magic": "Time each run: graphs, compile time, steady-state time per call (median of "
            "several calls after warm-up) and eager alongside. Only the compiled calls the cell made "
            "are re-run for it, not the whole cell.",
        },
        read=bool,
    ),
)
"""Every capture option's flag, in the order the help lists them."""

_METAVARS: Mapping[tuple[str, str], str] = {
    ("nonstrict", "cli"): "NAME",
    ("nonstrict", "record"): "NAME",
    ("nonstrict", "magic"): "NAME[,NAME...]",
    ("backend", "magic"): "NAME",
}


def _flag(option: str) -> Flag:
    return next(f for f in FLAGS if f.option == option)


def flag_arguments(front_end: FrontEnd, options: Sequence[str] | None = None) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """The ``add_argument`` calls of the capture flags ``front_end`` has, as ``(names, keywords)``.

    Args:
        front_end: who parses (see :data:`FrontEnd`).
        options: only these options, in this order (default: every option the front end has,
            in :data:`FLAGS` order).
    """
    chosen = [_flag(o) for o in options] if options is not None else list(FLAGS)
    calls = []
    for flag in chosen:
        if front_end not in flag.front_ends:
            continue
        names = (flag.flag, flag.short) if flag.short and front_end != "magic" else (flag.flag,)
        keywords = dict(flag.argparse)
        metavar = _METAVARS.get((flag.option, front_end))
        if metavar is not None:
            keywords["metavar"] = metavar
        if front_end == "demo":
            keywords["help"] = argparse.SUPPRESS  # demo takes --backend, unlisted
        else:
            keywords["help"] = flag.help.get(front_end) or flag.help["cli"]
        calls.append((names, keywords))
    return calls


def flag_names(front_end: FrontEnd, *, takes_value: bool) -> frozenset[str]:
    """The capture flags of ``front_end`` that take a value (or that are switches), short names too."""
    names: set[str] = set()
    for names_, keywords in flag_arguments(front_end):
        if (keywords.get("action") not in ("store_true", "store_false")) == takes_value:
            names.update(names_)
    return frozenset(names)


Spelling = Literal["api", "flag"]


def _named(option: str, value: Any, spelling: Spelling) -> str:
    if spelling == "flag":
        return f"{_flag(option).flag} {value}"
    return f"{option}={value!r}"


def check_capture_options(
    *,
    auto: bool,
    backend: Any,
    baseline: Any,
    budget_s: Any = None,
    max_attempts: Any = None,
    time: Any = False,
    spelling: Spelling = "api",
) -> None:
    """Refuse bad capture options with a message naming the option and the value.

    Args:
        auto: whether the advisor runs.
        backend: a backend name or a callable backend.
        baseline: ``"as_written"`` or ``"strict"``.
        budget_s: the advisor's time budget in seconds (None: not given).
        max_attempts: the advisor's attempt budget (None: not given).
        time: whether to time the runs (a bool).
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
    if not isinstance(time, bool):
        raise UsageError(f"{_named('time', time, spelling)}: time must be True or False")
    if spelling == "flag" and not auto and (budget_s is not None or max_attempts is not None):
        raise UsageError(
            f"{_flag('budget_s').flag} and {_flag('max_attempts').flag} bound the advisor; "
            f"they only apply with {_flag('auto').flag}"
        )


__all__ = [
    "BASELINE_MODES",
    "DEFAULT_BACKEND",
    "DEFAULT_BUDGET_RUNS",
    "DEFAULT_BUDGET_S",
    "DEFAULT_MAX_ATTEMPTS",
    "FLAGS",
    "BaselineMode",
    "CaptureOptions",
    "Flag",
    "FrontEnd",
    "check_capture_options",
    "default_budget_s",
    "flag_arguments",
    "flag_names",
    "split_names",
]
