"""The headline of a Report, computed once (:class:`~nstviz.report.Headline`).

Every renderer shows these chips as they are: the viewer draws one coloured span per chip,
:meth:`Report.summary`, the CLI and the widget's static summary print :attr:`Headline.text`.
No renderer derives a headline of its own.

The chips, in order:

- ``breaks``: distinct breaks, ``"3 breaks → 0"`` (baseline → nonstrict); green when fewer,
  red when more.
- ``graphs``: Dynamo graphs, ``"4 graphs → 1"``; when the baseline compiled nothing because
  it failed (``fullgraph=True`` stopped at a break, or it raised) and the nonstrict run
  compiled, ``"fullgraph failed → 1 graph"`` (green). More graphs alone is not red; fewer
  graphs is not green when the nonstrict run raised.
- ``failure``: ``"nonstrict raised ValueError"`` (red), when the nonstrict run raised.
- ``outputs``: the output verdict, ``"outputs match"``, ``"outputs match eager"`` (compared
  with the eager run because the baseline raised), ``"outputs DIFFER (max |Δ| 0.5)"`` (red),
  ``"outputs not checked (why)"``.

With no nonstrict run the chips give the baseline's numbers alone (``"2 breaks"``).
"""

from __future__ import annotations

from collections.abc import Mapping

from nstviz.report import Chip, Headline, OutputCheck, Run, RunCounts, Tone


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


def baseline_failure(base: Run) -> str | None:
    """Why the baseline produced no usable compile: ``"fullgraph failed"``, ``"baseline raised"`` or None."""
    if any(b.fatal for b in base.breaks):
        return "fullgraph failed"
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
    shown = f" (max |Δ| {format_number(diff)})" if diff is not None else ""
    return Chip(kind="outputs", text=f"outputs DIFFER{' from' + against if against else ''}{shown}", tone="bad")


def _trend(before: int, after: int) -> Tone:
    return "good" if after < before else "bad" if after > before else "neutral"


def build_headline(runs: Mapping[str, Run], counts: Mapping[str, RunCounts], outputs: OutputCheck) -> Headline:
    """The headline of a Report with these runs, counts and output check."""
    base = runs.get("baseline")
    if base is None or "baseline" not in counts:
        return _headline((Chip(kind="note", text="no baseline run"),))
    b = counts["baseline"]
    nonstrict = runs.get("nonstrict")
    if nonstrict is None or "nonstrict" not in counts:
        return _headline(
            (
                Chip(kind="breaks", text=plural(b.breaks, "break")),
                Chip(kind="graphs", text=plural(b.graphs, "graph")),
                outputs_chip(outputs),
            )
        )
    n = counts["nonstrict"]
    chips = [Chip(kind="breaks", text=f"{plural(b.breaks, 'break')} → {n.breaks}", tone=_trend(b.breaks, n.breaks))]
    failure = baseline_failure(base)
    raised = nonstrict.error is not None or nonstrict.error_type is not None
    if failure and b.graphs == 0 and n.graphs > 0 and not raised:
        chips.append(Chip(kind="graphs", text=f"{failure} → {plural(n.graphs, 'graph')}", tone="good"))
    else:
        # fewer graphs is better, unless the nonstrict run raised before compiling them
        better = not raised and ((b.graphs == 0 and n.graphs > 0) or n.graphs < b.graphs)
        chips.append(
            Chip(kind="graphs", text=f"{plural(b.graphs, 'graph')} → {n.graphs}", tone="good" if better else "neutral")
        )
    if raised:
        chips.append(Chip(kind="failure", text=f"nonstrict raised {nonstrict.error_type or 'an error'}", tone="bad"))
    chips.append(outputs_chip(outputs))
    return _headline(tuple(chips))


def _headline(chips: tuple[Chip, ...]) -> Headline:
    return Headline(chips=chips, text=", ".join(c.text for c in chips))


__all__ = ["baseline_failure", "build_headline", "format_number", "outputs_chip", "plural"]
