"""The headline of a Report, computed once (:class:`~nstviz.report.Headline`).

Every renderer shows these chips as they are: the viewer draws one coloured span per chip,
:meth:`Report.summary`, the CLI and the widget's static summary print :attr:`Headline.text`.
No renderer derives a headline of its own.

The chips, in order:

- ``breaks``: distinct breaks, ``"3 breaks → 0"`` (baseline → nonstrict); green when fewer
  and the nonstrict run is an improvement (:mod:`nstviz.passes.improvement`: fewer graphs,
  fewer frames run eagerly, or a failed compile that now compiles, with the outputs
  verified), red when more.
- ``graphs``: Dynamo graphs, ``"4 graphs → 1"``; when the baseline compiled nothing because
  it failed (``fullgraph=True`` stopped at a break, or it raised) and the nonstrict run
  compiled, ``"fullgraph failed → 1 graph"``. Green only for an improvement (so not when the
  nonstrict run raised or the outputs are not verified); more graphs alone is not red.
- ``note`` ``"same 20 graphs (breaks 5 -> 4, Dynamo counted 14 -> 0 graph breaks)"`` or
  ``"the break moved: a.py:3 -> b.py:9 (same 4 graphs)"``, when the break sites changed but
  the graphs did not (not an improvement); ``"1 fewer frame(s) run eagerly (same 17 graphs)"``
  (green) when that is the improvement (``torch._dynamo.explain`` counts as many graphs). Fewer graphs that come from a frame Dynamo gave up
  on (a failed compile, ``recompile_limit``) are not green either; the ``failure``/``note``
  chips below say which frame.
- ``failure``: ``"compile failed: <real cause>"`` (red, first), when a compile of the
  baseline failed without a fatal graph break: a hard compile error (Dynamo's own
  ``compilation_metrics`` event has a ``fail_reason`` and no graph came of that compile, also
  when the user's code caught the exception). A ``fullgraph=True`` failure on a graph break is
  a fatal break instead, caught or not (the ``graphs`` chip says ``"fullgraph failed"``).
  ``"nonstrict compile failed: ..."`` when only the nonstrict run's compile failed;
  ``"nonstrict fullgraph failed: <break>"`` (red) when the nonstrict run has a fatal break the
  code caught; ``"nonstrict raised ValueError"`` (red), when the nonstrict run raised.
- ``note`` ``"recompile limit hit: f (dir/a.py:3) runs eagerly"`` (red), when a frame of the baseline
  hit ``recompile_limit`` (Dynamo runs it eagerly from then on; not a compile failure), and
  ``"nonstrict recompile limit hit: ..."`` when only the nonstrict run's did. The chip carries
  what it means (:attr:`Chip.help`: the function, its file, the limit, the guard that failed last)
  and the compile it is about (``run``, ``compile_id``: the viewer opens that compile's detail).
- ``outputs``: the output verdict, ``"outputs match"``, ``"outputs match eager"`` (compared
  with the eager run because the baseline raised), ``"outputs DIFFER (max |Δ| 0.5)"`` (red),
  ``"outputs DIFFER: y: None vs tensor f32[3]"`` (red: what differs when it is not a number),
  ``"outputs not checked (why)"``; then ``"compiled differs from eager (max |Δ| 2.65)"`` (red)
  when the eager run and the baseline disagree and the code was not found non-deterministic,
  even when baseline and nonstrict agree.

With no nonstrict run the chips give the baseline's numbers alone (``"2 breaks"``;
``"fullgraph failed: 0 graphs"`` in red when a fatal break stopped the compile); when that
is because nothing was marked (no names given, the advisor recommended nothing), a ``note``
chip ``"nothing was marked (baseline only)"`` comes first.
"""

from __future__ import annotations

from collections.abc import Mapping

from nstviz._where import original_function
from nstviz.passes.causes import explain_error
from nstviz.passes.failures import (
    compile_failures,
    frame_where,
    recompile_limit_help,
    recompile_limit_hits,
    skip_reason,
    skipped_frames,
)
from nstviz.passes.improvement import Change, judge_change
from nstviz.report.model import (
    Chip,
    Compile,
    Headline,
    OutputCheck,
    OutputComparison,
    OutputDetail,
    Run,
    RunCounts,
    Tone,
)

_MAX_WHAT = 80
_COMPILE_ERRORS = frozenset(
    {"BackendCompilerFailed", "TorchRuntimeError", "InternalTorchDynamoError", "TorchDynamoException"}
)
"""Exception types that mean torch's compiler failed, not the user's code."""


def plural(n: int, word: str) -> str:
    """``"1 break"``, ``"2 breaks"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_number(x: float | None) -> str:
    """Short text of a difference: 3 significant digits, exponent form below 1e-3 or from 1e5."""
    if x is None or x != x:
        return "—"
    if x == 0:
        return "0"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if abs(x) < 1e-3 or abs(x) >= 1e5:
        mantissa, exp = f"{x:.1e}".split("e")
        return f"{mantissa}e{'-' if exp.startswith('-') else '+'}{int(exp[1:])}"
    return f"{float(f'{x:.3g}'):g}"




def _frame_function(run: Run, frame_id: int | None) -> str:
    """The function of a frame, qualified where known (resume functions named by the function they resume)."""
    qual = next((c.qualname for c in run.compiles if c.frame_id == frame_id and c.qualname), None)
    if qual:
        return qual
    name = next((c.function for c in run.compiles if c.frame_id == frame_id and c.function), "")
    return original_function(name)[0]


def _frame_names(run: Run, compiles: tuple[Compile, ...], unknown: str) -> tuple[str, int]:
    """The first frame's function among ``compiles`` and ``" and N more"`` words for the rest."""
    names = list(dict.fromkeys(_frame_function(run, c.frame_id) or unknown for c in compiles))
    return names[0], len(names) - 1


def recompile_limit_text(run: Run) -> str | None:
    """``"recompile limit hit: f (dir/a.py:3) runs eagerly"`` when a frame of ``run`` hit ``recompile_limit``."""
    hits = recompile_limit_hits(run)
    if not hits:
        return None
    first, others = _frame_names(run, hits, "a frame")
    more = f" and {others} more" if others else ""
    verb = "run" if more else "runs"
    at = frame_where(run, hits[0])
    return _short(f"recompile limit hit: {first}{f' ({at})' if at else ''}{more} {verb} eagerly")


def recompile_limit_chip(run: Run, name: str, text: str) -> Chip:
    """The red ``note`` chip of a ``recompile_limit`` hit: it says what it means and opens the compile."""
    hit = recompile_limit_hits(run)[0]
    return Chip(kind="note", text=text, tone="bad", help=recompile_limit_help(run, hit), run=name, compile_id=hit.cid)


def skipped_frame_text(run: Run) -> str | None:
    """``"Dynamo skipped the frame f: a break inside a loop (GB7000)"``: a frame that ran eagerly."""
    skipped = skipped_frames(run)
    if not skipped:
        return None
    first, others = _frame_names(run, skipped, "?")
    more = f" (and {others} more)" if others else ""
    return _short(f"Dynamo skipped the frame {first}{more}: {skip_reason(skipped[0])}")


def compile_failure_text(run: Run) -> str | None:
    """``"compile failed: <real cause>"`` when a compile of ``run`` failed without a fatal break, else None."""
    if any(b.fatal for b in run.breaks):
        return None
    failed = compile_failures(run)
    if not failed:
        if run.error and run.error_type in _COMPILE_ERRORS:
            return _short(explain_error(run.error, None))
        return None

    if run.error and run.error_type and run.error_type not in ("Unsupported", "UserError"):
        return _short(explain_error(run.error, None))  # the exception the user saw, unwrapped
    reason = failed[0].fail_reason or ""
    explanation = next(
        (ln.strip()[len("Explanation:") :].strip() for ln in reason.splitlines() if ln.strip().startswith("Explanation:")),
        "",
    )
    where = f" in {failed[0].function}" if failed[0].function else ""
    return _short(f"compile failed{where}: {explanation}" if explanation else explain_error(reason, None))


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compile_failed(run: Run) -> bool:
    """Whether a compile of ``run`` failed: a fatal break, or a compile that failed (:func:`compile_failures`).

    Also when the user's code caught the exception: what the code computed after that (an
    ``except`` branch) is not the compiled code's output, so it is not compared.
    """
    return any(b.fatal for b in run.breaks) or bool(compile_failures(run))


def baseline_failure(base: Run) -> str | None:
    """Why the baseline produced no usable compile: ``"fullgraph failed"``, ``"compile failed"``, ``"baseline raised"`` or None."""
    if any(b.fatal for b in base.breaks):
        return "fullgraph failed"
    if compile_failures(base) or (base.error and base.error_type in _COMPILE_ERRORS):
        return "compile failed"
    if base.error is not None or base.error_type is not None:
        return "baseline raised"
    return None


def _compared_against(outputs: OutputCheck) -> str:
    """``" eager"`` when the verdict compares nonstrict with a run other than the baseline."""
    comps = outputs.comparisons
    pair = next((c for c in comps if {c.left, c.right} == {"baseline", "nonstrict"}), comps[0] if comps else None)
    if pair is None or {pair.left, pair.right} == {"baseline", "nonstrict"}:
        return ""
    names = (pair.left, pair.right)
    other = next((n for n in names if n not in ("nonstrict", "baseline")), None)
    if other is None:
        other = next((n for n in names if n != "nonstrict"), None)
    return f" {other}" if other else ""


def outputs_chip(outputs: OutputCheck) -> Chip:
    """The output verdict."""
    if outputs.match is None:
        why = f" ({outputs.skipped_reason})" if outputs.skipped_reason else ""
        return Chip(kind="outputs", text=f"outputs not checked{why}", tone="neutral")
    against = _compared_against(outputs)
    diff = outputs.max_abs_diff
    if outputs.match:
        shown = f" (max |Δ| {format_number(diff)})" if diff else ""
        return Chip(kind="outputs", text=f"outputs match{against}{shown}", tone="good")
    pair = next((c for c in outputs.comparisons if c.details == outputs.details), None)
    shown = what_differs(outputs.details, diff, (pair.left, pair.right) if pair is not None else None)
    return Chip(kind="outputs", text=f"outputs DIFFER{' from' + against if against else ''}{shown}", tone="bad")


def what_differs(details: tuple[OutputDetail, ...], diff: float | None, sides: tuple[str, str] | None = None) -> str:
    """`` (max |Δ| 0.5)`` when a number differs; else ``: path: note`` of the first differing value.

    Never ``max |Δ| 0``: a value that is ``None`` on one side, a dtype, a shape or a missing
    name is said as such.
    """
    if diff:
        return f" (max |Δ| {format_number(diff)})"
    first = next((d for d in details if d.match is False), None)
    if first is None:
        return ""
    note = first.note or "differs"
    if sides and " vs " in note and "missing in" not in note:
        note += f" ({sides[0]} vs {sides[1]})"
    return ": " + _short(f"{first.path}: {note}", _MAX_WHAT)


def eager_chip(outputs: OutputCheck) -> Chip | None:
    """``"compiled differs from eager (max |Δ| 2.65)"`` when eager and the baseline disagree.

    Not shown when the code disagreed with itself on a re-run (non-deterministic), nor when
    the verdict itself already compares with eager (the baseline raised).
    """
    if outputs.nondeterministic:
        return None
    pair: OutputComparison | None = next(
        (c for c in outputs.comparisons if {c.left, c.right} == {"eager", "baseline"}), None
    )
    if pair is None or pair.match is not False:
        return None
    if not any({c.left, c.right} == {"baseline", "nonstrict"} for c in outputs.comparisons):
        return None  # the verdict itself is this comparison (no nonstrict run)
    return Chip(
        kind="outputs", text=f"compiled differs from eager{what_differs(pair.details, pair.max_abs_diff, (pair.left, pair.right))}", tone="bad"
    )


def build_headline(
    runs: Mapping[str, Run],
    counts: Mapping[str, RunCounts],
    outputs: OutputCheck,
    *,
    nothing_marked: bool = False,
) -> Headline:
    """The headline of a Report with these runs, counts and output check.

    Args:
        runs: the Report's runs by name.
        counts: their counts.
        outputs: the output check.
        nothing_marked: no function was marked (and no remedy recommended), so the nonstrict
            run was not made: the headline starts with ``"nothing was marked (baseline only)"``.
    """
    base = runs.get("baseline")
    if base is None or "baseline" not in counts:
        return _headline((Chip(kind="note", text="no baseline run"),))
    b = counts["baseline"]
    nonstrict = runs.get("nonstrict")
    first = _baseline_failure_chips(base)
    eager = eager_chip(outputs)
    last = [eager] if eager is not None else []
    if nonstrict is None or "nonstrict" not in counts:
        return _baseline_only(base, b, outputs, (first, last), nothing_marked)
    n = counts["nonstrict"]
    change = judge_change(base, nonstrict, outputs, graphs=(b.graphs, n.graphs))
    # green only for an improvement (fewer graphs, fewer frames run eagerly, a failed compile
    # that now compiles; outputs verified); more distinct breaks is red
    breaks_tone: Tone = "bad" if n.breaks > b.breaks else "good" if change.improved and n.breaks < b.breaks else "neutral"
    chips = [
        *first,
        Chip(kind="breaks", text=f"{plural(b.breaks, 'break')} → {n.breaks}", tone=breaks_tone),
        _graphs_chip(base, nonstrict, (b, n), change),
    ]
    note = _change_note(change, baseline_failure(base), (b, n))
    if note is not None:
        chips.append(note)
    chips.extend(_nonstrict_failure_chips(base, nonstrict))
    chips.append(outputs_chip(outputs))
    chips.extend(last)
    return _headline(tuple(chips))


def _baseline_failure_chips(base: Run) -> list[Chip]:
    """The baseline's failed compile, its frames at ``recompile_limit``, its frames skipped."""
    failed = compile_failure_text(base)
    first = [Chip(kind="failure", text=failed, tone="bad")] if failed else []
    limit = recompile_limit_text(base)
    if limit:
        first.append(recompile_limit_chip(base, "baseline", limit))
    skipped = skipped_frame_text(base)
    if skipped:
        first.append(Chip(kind="note", text=skipped, tone="bad"))
    return first


def _baseline_only(
    base: Run, b: RunCounts, outputs: OutputCheck, around: tuple[list[Chip], list[Chip]], nothing_marked: bool
) -> Headline:
    """The headline without a nonstrict run: the baseline's breaks, graphs and outputs.

    ``around`` holds the chips that go first (the baseline's failures) and last (eager's).
    """
    first, last = around
    note = [Chip(kind="note", text="nothing was marked (baseline only)")] if nothing_marked else []
    fullgraph_failed = baseline_failure(base) == "fullgraph failed"
    return _headline(
        (
            *note,
            *first,
            Chip(kind="breaks", text=plural(b.breaks, "break")),
            Chip(kind="graphs", text=f"fullgraph failed: {plural(b.graphs, 'graph')}", tone="bad")
            if fullgraph_failed
            else Chip(kind="graphs", text=plural(b.graphs, "graph")),
            outputs_chip(outputs),
            *last,
        ),
        nothing_marked=nothing_marked,
    )


def _graphs_chip(base: Run, nonstrict: Run, counts: tuple[RunCounts, RunCounts], change: Change) -> Chip:
    """Graphs before -> after (or the baseline's failure -> graphs), green for an improvement."""
    b, n = counts
    failure = baseline_failure(base)
    raised = nonstrict.error is not None or nonstrict.error_type is not None
    graphs_tone: Tone = (
        "good" if change.improved and change.kind in ("fewer_graphs", "compiles_now", "eager_frames_compile") else "neutral"
    )
    if failure and b.graphs == 0 and n.graphs > 0 and not raised:
        return Chip(kind="graphs", text=f"{failure} → {plural(n.graphs, 'graph')}", tone=graphs_tone)
    return Chip(kind="graphs", text=f"{plural(b.graphs, 'graph')} → {n.graphs}", tone=graphs_tone)


def _change_note(change: Change, failure: str | None, counts: tuple[RunCounts, RunCounts]) -> Chip | None:
    """A change that is not an improvement, said as what it is (other break sites, fewer eager frames)."""
    b, n = counts
    if (
        change.kind in ("moved", "same")
        and not failure
        and b.graphs > 0
        and (n.breaks < b.breaks or (change.kind == "moved" and n.breaks == b.breaks))
    ):
        # fewer (or other) break sites, as many graphs: not an improvement, said as what it is
        return Chip(kind="note", text=_short(change.text))
    if change.kind == "fewer_eager_frames":  # what explain cannot see; not an improvement on its own
        return Chip(kind="note", text=_short(change.text))
    return None


def _nonstrict_failure_chips(base: Run, nonstrict: Run) -> list[Chip]:
    """What went wrong in the nonstrict run that did not in the baseline: raised, failed, hit the limit."""
    if nonstrict.error is not None or nonstrict.error_type is not None:
        return [Chip(kind="failure", text=f"nonstrict raised {nonstrict.error_type or 'an error'}", tone="bad")]
    chips = []
    n_failed = compile_failure_text(nonstrict)
    n_fatal = next((brk for brk in nonstrict.breaks if brk.fatal), None)
    if n_fatal is not None:  # caught by the code: nothing raised, but the compile still failed
        chips.append(Chip(kind="failure", text=_short(f"nonstrict fullgraph failed: {n_fatal.reason}"), tone="bad"))
    elif n_failed and n_failed != compile_failure_text(base):
        chips.append(Chip(kind="failure", text=f"nonstrict {n_failed}", tone="bad"))
    n_limit = recompile_limit_text(nonstrict)
    if n_limit and n_limit != recompile_limit_text(base):
        chips.append(recompile_limit_chip(nonstrict, "nonstrict", f"nonstrict {n_limit}"))
    return chips


def _headline(chips: tuple[Chip, ...], *, nothing_marked: bool = False) -> Headline:
    return Headline(chips=chips, text=", ".join(c.text for c in chips), nothing_marked=nothing_marked)


__all__ = [
    "baseline_failure",
    "build_headline",
    "compile_failed",
    "compile_failure_text",
    "eager_chip",
    "format_number",
    "outputs_chip",
    "plural",
    "recompile_limit_chip",
    "recompile_limit_text",
    "skipped_frame_text",
    "what_differs",
]
