"""Judge: what one attempt did compared with the marks kept before it (improved, failed...).

The improvement rule itself is :func:`nstviz.passes.improvement.judge_change` (fewer Dynamo
graphs, else a failed compile that now compiles; outputs verified); this module turns it into a candidate's status and the sentence that says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nstviz._gb_ids import NONSTRICT_REJECTED
from nstviz.advisor.propose import _short_break
from nstviz.passes.causes import explain_error, explain_failure
from nstviz.passes.improvement import judge_change
from nstviz.report import Break, OutputCheck, Run

__all__ = [
    "attempt_fields",
    "dynamo_graphs",
    "gb_in",
    "judge",
    "mark_warning",
    "rejected_input_type",
    "stayed_text",
]

_GB_RE = re.compile(r"\bGB\d{4}\b")


@dataclass
class _Outcome:
    status: str
    improved: bool
    error: str | None = None
    gb_id: str | None = None
    on_trial: bool = False
    """Not an improvement, but kept on trial: a ``fullgraph=True`` failure's fatal break moved on
    to a later one, which can only be tried on top of it. Confirmed when a later attempt compiles."""


def fatal_break(run: Run) -> Break | None:
    return next((b for b in run.breaks if b.fatal), None)


def attempt_fields(
    outcome: _Outcome, run_name: str, before: Run, after: Run, check: OutputCheck, elapsed_s: float
) -> dict[str, Any]:
    """The :class:`Candidate` fields an attempt fills in, the same for marks and config remedies."""
    return {
        "status": outcome.status,
        "run": run_name,
        "breaks_before": len(before.breaks),
        "breaks_after": len(after.breaks),
        "outputs_match": check.match,
        "error": outcome.error,
        "gb_id": outcome.gb_id,
        "elapsed_s": round(elapsed_s, 3),
    }


def judge(
    before: Run, after: Run, check: OutputCheck, candidate_gb_ids: set[str | None] | None = None
) -> _Outcome:
    """The status of an attempt that ran ``after`` on top of ``before`` (its output check ``check``)."""
    before_keys = {b.id for b in before.breaks}
    introduced = [b for b in after.breaks if b.id not in before_keys]
    also = f"; the outputs also changed ({_mismatch_text(check)})" if check.match is False else ""
    failure = next(
        (b for b in introduced if b.gb_id in NONSTRICT_REJECTED or "nonstrict_trace" in (b.reason or "")),
        None,
    )
    change = judge_change(before, after, check)
    if change.improved and change.kind == "compiles_now":
        # a hard compile error is gone: the code compiles now (outputs checked against eager)
        note = f"the compile works now ({len(after.breaks)} break(s) remain)"
        if failure is not None:
            note += f"; the mark itself falls back to eager: {explain_failure(failure, candidate_gb_ids or ())}"
        return _Outcome("improved", True, note)
    if failure is not None:
        return _Outcome("failed", False, explain_failure(failure, candidate_gb_ids or ()) + also, failure.gb_id)
    if after.error and not before.error:
        fatal = fatal_break(after)
        m = _GB_RE.search(after.error or "")
        text = explain_error(after.error, fatal)
        return _Outcome("failed", False, text + also, (fatal.gb_id if fatal else None) or (m.group(0) if m else None))
    n_before, n_after = len(before.breaks), len(after.breaks)
    if check.match is False:
        return _Outcome("worse", False, _mismatch_text(check))
    if change.improved:
        return _Outcome("improved", True, change.text)
    if change.kind == "moved" and fatal_break(before) is not None and n_after <= n_before:
        # fullgraph=True: the fatal break moved on to a later one. Not an improvement (the
        # compile still fails), but the break behind it can only be tried on top of it.
        return _Outcome("no_change", False, change.text + " (kept on trial, to try the break behind it)", on_trial=True)
    if n_after > n_before and change.kind != "more_eager_frames":
        new = "; ".join(_short_break(b) for b in introduced[:3]) or "?"
        return _Outcome("worse", False, f"breaks went up from {n_before} to {n_after}: new break at {new} ({change.text})")
    if change.kind in ("more_graphs", "more_eager_frames"):
        return _Outcome("worse", False, change.text)
    same = change.kind == "same" and n_after == n_before  # stayed_text names the sites
    return _Outcome("no_change", False, None if same else change.text)


def stayed_text(before: Run, after: Run) -> str | None:
    """Why a ran attempt changed nothing, when nothing more specific is known: what stayed."""
    if len(after.breaks) != len(before.breaks):
        return None
    kept = [b for b in after.breaks if b.id in {x.id for x in before.breaks}]
    counted = ""
    if before.dynamo_graph_breaks is not None and after.dynamo_graph_breaks is not None:
        counted = f", Dynamo counted {before.dynamo_graph_breaks} -> {after.dynamo_graph_breaks} graph breaks"
    sites = "; ".join(_short_break(b) for b in kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
    return (
        f"the breaks stayed where they were ({dynamo_graphs(before)} -> {dynamo_graphs(after)} graphs{counted})"
        + (f": {sites}" if sites else "")
    )


def dynamo_graphs(run: Run) -> int:
    """How many graphs Dynamo made in ``run``."""
    return sum(1 for g in run.graphs if g.level == "dynamo")


def _mismatch_text(check: OutputCheck) -> str:
    bad = [d for d in check.details if d.match is False]
    if not bad:
        return "outputs differ from the baseline"
    d = bad[0]
    diff = f", max abs diff {d.max_abs_diff:.3g}" if d.max_abs_diff is not None else ""
    note = f": {d.note}" if d.note else ""
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    return f"outputs differ from the baseline at {d.path}{diff}{note}{more}"



_GOT_RE = re.compile(r"\(it got ([\w.]+)\)|\(it returned ([\w.]+)\)|non-fx-graphable type <class '([\w.]+)'>|input of type <([\w.]+)>")


def rejected_input_type(error: str | None) -> str | None:
    """The type a failed nonstrict attempt was refused for (``NoneType``, ``Box``), if any."""
    m = _GOT_RE.search(error or "")
    return next((g for g in m.groups() if g), None) if m else None


def rejected_as_output(error: str | None) -> bool:
    """Whether a failed attempt's type was refused in the function's return value, not its inputs."""
    return "(it returned " in (error or "")



def mark_warning(run: Run, name: str) -> str | None:
    """The capture's warning for a mark that did not take effect in ``run`` (e.g. never called)."""
    for m in run.marked:
        if (m.qualname == name or name.endswith("." + m.qualname)) and not m.applied and m.warning:
            return m.warning
    return None


def gb_in(text: str) -> str | None:
    """The first GB id in ``text``, if any."""
    m = _GB_RE.search(text or "")
    return m.group(0) if m else None

