"""What counts as an improvement between two runs of the same code: the one predicate.

A run is better than another when Dynamo compiled it into **fewer graphs** (fewer places
where eager Python runs between compiled code; not when more frames run eagerly, which is
what takes graphs away), else when it is a **failed compile that now compiles** (an error, or a
``fullgraph=True`` failure, gone); and in every case only with the **outputs verified**
(the output check says they match). The one exception: a failed compile that now compiles
when there is nothing to compare with (the failed run left no outputs and no eager run was
made, e.g. ``trace_code``), or when the code gave no values at all to compare (the seed's
``try: ... except Exception as e: print(e)``); it is said so ("outputs not verified: no
reference run" / "...: nothing to compare"). The advisor keeps an attempt on this, the recommendation
needs it, and the headline turns green on it (:mod:`nstviz.advisor.search`,
:mod:`nstviz.passes.headline`).

**More graphs because frames that ran eagerly now compile** is an improvement: a frame Dynamo
gave up on (a compile that failed or was skipped after a break, e.g. a break inside a loop,
GB7000; or ``recompile_limit``) ran as plain Python, so 0 graphs there were not better than 1.
It needs fewer such frames, no more distinct breaks, and the outputs verified
(``kind="eager_frames_compile"``: ``"1 frame(s) Dynamo ran eagerly compile now (0 -> 1 graphs)"``).

With as many graphs, **fewer frames run eagerly** (frames Dynamo gave up on: a compile that
failed or was skipped and gave no graph, or a frame that hit ``recompile_limit``) is reported
(``kind="fewer_eager_frames"``) but is not an improvement: ``torch._dynamo.explain`` counts the
same graphs, and a recommendation must lower that count (issue 19).

Fewer *distinct break sites*, or a lower ``counters["graph_break"]``, with as many graphs is
not an improvement: the same graphs run with eager Python between them. It is said as what it
is: ``"the break moved: a.py:3 -> b.py:9 (same 20 graphs)"`` or ``"same 20 graphs (breaks
5 -> 4, Dynamo counted 14 -> 0 graph breaks)"``.

Graphs are Dynamo graphs, one per compiled piece of user code (each frame's compile, resume
functions and recompiles included, not the ATen graphs derived from them): the figure
``torch._dynamo.explain(fn)(...).graph_count`` reports for the same call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nstviz._where import original_function
from nstviz.passes.failures import compile_failures, recompile_limit_hits, skip_reason, skipped_frames
from nstviz.report.model import Break, OutputCheck, Run

__all__ = ["Change", "compile_failed", "eager_frames", "improves", "judge_change"]

ChangeKind = Literal[
    "fewer_graphs",
    "fewer_eager_frames",
    "compiles_now",
    "eager_frames_compile",
    "not_verified",
    "outputs_differ",
    "fails_now",
    "more_eager_frames",
    "more_graphs",
    "moved",
    "same",
]


@dataclass(frozen=True)
class Change:
    """What changed from one run to another, judged by :func:`judge_change`.

    ``improved`` is the predicate; ``kind`` says which rule decided; ``text`` says it in
    words (``"20 -> 18 graphs"``, ``"the break moved: ..."``, ``"same 20 graphs (...)"``).
    """

    improved: bool
    kind: ChangeKind
    text: str


def dynamo_graphs(run: Run) -> int:
    """Dynamo graphs of ``run`` (what ``torch._dynamo.explain`` counts as ``graph_count``)."""
    return sum(1 for g in run.graphs if g.level == "dynamo")


def compile_failed(run: Run) -> bool:
    """The run's compile failed.

    It raised, a ``fullgraph=True`` break was fatal, or a compile failed (also when the
    user's code caught it) and no Dynamo graph came of the run. A frame that failed while
    others compiled runs eagerly (:func:`eager_frames`).
    """
    if run.error is not None or run.error_type is not None or any(b.fatal for b in run.breaks):
        return True
    return bool(compile_failures(run)) and dynamo_graphs(run) == 0


def eager_frames(run: Run) -> int:
    """Frames Dynamo gave up on, so they run as plain Python.

    A compile of the frame failed or was skipped (a ``fail_reason``) and no graph came of the
    frame, or the frame hit ``recompile_limit`` (eager from then on). A frame that breaks
    before its first op also gives no graph, but runs nothing eagerly before the break (what
    follows is compiled as a resume function): it is not counted.
    """
    with_graph = {c.frame_id for c in run.compiles if c.graph_ids}
    failed = {c.frame_id for c in run.compiles if c.fail_reason} - with_graph
    return len(failed | {c.frame_id for c in recompile_limit_hits(run)})


def _graphs(n: int) -> str:
    return f"{n} graph{'' if n == 1 else 's'}"


def _site(b: Break) -> str:
    loc = b.location
    if loc is None:
        return b.gb_id or b.gb_type or "?"
    return f"{loc.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{loc.line}"


def _sites(breaks: tuple[Break, ...] | list[Break], limit: int = 2) -> str:
    names = list(dict.fromkeys(_site(b) for b in breaks))
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _counters(before: Run, after: Run) -> str:
    """``"breaks 5 -> 4, Dynamo counted 14 -> 0 graph breaks"``: the figures that moved."""
    parts = []
    if len(before.breaks) != len(after.breaks):
        parts.append(f"breaks {len(before.breaks)} -> {len(after.breaks)}")
    cb, ca = before.dynamo_graph_breaks, after.dynamo_graph_breaks
    if cb is not None and ca is not None and cb != ca:
        parts.append(f"Dynamo counted {cb} -> {ca} graph breaks")
    return ", ".join(parts)


def _moved(before: Run, after: Run) -> str | None:
    """``"a.py:3 -> b.py:9"`` (or ``"a.py:3 no longer listed"``) when the break sites changed, else None."""
    before_ids = {b.id for b in before.breaks}
    after_ids = {b.id for b in after.breaks}
    if before_ids == after_ids:
        return None
    gone = [b for b in before.breaks if b.id not in after_ids]
    new = [b for b in after.breaks if b.id not in before_ids]
    if not new:
        return f"{_sites(gone)} no longer listed"
    return f"{_sites(gone) or 'no site'} -> {_sites(new)}"


def _unverified(check: OutputCheck | None) -> str | None:
    """Why the outputs are not verified (None when they match)."""
    if check is None:
        return "outputs not checked"
    if check.match is True:
        return None
    if check.match is False:
        return "outputs differ"
    return f"outputs not verified ({check.skipped_reason})" if check.skipped_reason else "outputs not verified"


def _skips_gone(before: Run, after: Run) -> int:
    """How many fewer frames Dynamo skipped whole for a break inside a loop (GB7000) in ``after``.

    Only those, and only where no break is left in the frame: a frame that compiles under a flag
    but still breaks splits into more graphs.
    """

    def loops(run: Run) -> set[str]:
        # a resume function (torch_dynamo_resume_in_f_at_12) is a frame of f's code
        return {original_function(c.function)[0] for c in skipped_frames(run) if skip_reason(c).endswith("(GB7000)")}

    gone = loops(before) - loops(after)
    # the frame must compile whole: a break left in it splits it (FastSpeech2's second flag:
    # its loop compiles, but broken, 3 -> 4 graphs, and explain counts 3 -> 4 too)
    still_broken = {b.location.function for b in after.breaks} | {f for b in after.breaks for f in (x.function for x in b.stack)}
    return len(gone - still_broken)


def judge_change(
    before: Run, after: Run, check: OutputCheck | None, *, graphs: tuple[int, int] | None = None
) -> Change:
    """Whether ``after`` improves on ``before`` (see the module docstring), and what changed.

    Args:
        before: the run to improve on (the baseline, or the attempt kept so far).
        after: the run with the change.
        check: the output check of ``after`` (against the baseline, or eager when the baseline
            failed); the outputs are verified only when it says they match.
        graphs: the Dynamo graphs of both runs as already counted (``Report.counts``);
            counted from the runs when not given.
    """
    fb, fa = compile_failed(before), compile_failed(after)
    gb, ga = graphs if graphs is not None else (dynamo_graphs(before), dynamo_graphs(after))
    eb, ea = eager_frames(before), eager_frames(after)
    counters = _counters(before, after)
    moved = _moved(before, after)
    if check is not None and check.match is False:
        return Change(False, "outputs_differ", "outputs differ")
    if fa and not fb:
        return Change(False, "fails_now", "the compile fails now")
    if fb and fa:
        if moved:
            return Change(False, "moved", f"the break moved: {moved}; the compile still fails")
        return Change(False, "same", "the compile still fails")
    if fb:
        better = Change(True, "compiles_now", f"the compile works now ({ga} graph{'' if ga == 1 else 's'})")
    elif ea > eb:
        text = f"{ea - eb} more frame(s) run eagerly ({gb} -> {ga} graphs)"
        return Change(False, "more_eager_frames", text + (f"; {counters}" if counters else ""))
    elif ga < gb:
        better = Change(True, "fewer_graphs", f"{gb} -> {ga} graphs")
    elif ga > gb and ea < eb and len(after.breaks) <= len(before.breaks) and 0 < ga - gb <= _skips_gone(before, after):
        # the graphs gained are frames Dynamo skipped (a break inside a loop: the whole frame ran
        # as Python) that compile now; not a failed compile that now splits in more graphs
        # (FastSpeech2's second flag: 3 -> 4 graphs, explain 3 -> 4)
        better = Change(True, "eager_frames_compile", f"{eb - ea} frame(s) Dynamo ran eagerly compile now ({gb} -> {ga} graphs)")
    elif ga > gb:
        return Change(False, "more_graphs", f"{gb} -> {ga} graphs" + (f" ({counters})" if counters else ""))
    elif ea < eb:  # reported, not kept: explain's graph count is what a change must lower
        text = f"{eb - ea} fewer frame(s) run eagerly, but the same {_graphs(gb)}: not an improvement"
        return Change(False, "fewer_eager_frames", text)
    elif moved:
        return Change(False, "moved", f"the break moved: {moved} (same {_graphs(gb)})" + (f"; {counters}" if counters else ""))
    else:
        return Change(False, "same", f"same {_graphs(gb)}" + (f" ({counters})" if counters else ""))
    why = _unverified(check)
    if why is not None and better.kind == "compiles_now" and check is not None and check.match is None:
        if not check.comparisons:  # the failed run left no outputs and no eager run was made
            return Change(True, "compiles_now", f"{better.text}; outputs not verified: no reference run")
        if all(c.match is None for c in check.comparisons):  # e.g. the seed's `print(e)`: no values at all
            return Change(True, "compiles_now", f"{better.text}; outputs not verified: nothing to compare")
    if why is not None:
        return Change(False, "not_verified", f"{better.text}, but {why}")
    return better


def improves(before: Run, after: Run, check: OutputCheck | None) -> bool:
    """Whether ``after`` is an improvement on ``before``.

    Fewer graphs, else a failed compile that now compiles; with the outputs verified (:func:`judge_change` says which, and what changed).
    """
    return judge_change(before, after, check).improved
