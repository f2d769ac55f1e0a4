"""The notes pass: warnings for the user, from the finished nonstrict run.

- a mark that never applied (its warning, from :mod:`nstviz.passes.marks`);
- a non-strict function that reads values which are not its inputs (baked in as constants);
- a non-strict function that produced no ATen node (its result was baked into the graph).
"""

from __future__ import annotations

from collections.abc import Sequence

from nstviz.report.model import Run


def run_notes(capture_notes: Sequence[str], nonstrict: Run | None) -> tuple[str, ...]:
    """The capture's own notes (deduplicated), then what the nonstrict run's marks and regions say."""
    notes = list(dict.fromkeys(capture_notes))
    if nonstrict is None:
        return tuple(notes)
    for m in nonstrict.marked:
        if not m.applied and m.warning:
            notes.append(m.warning)
        if m.applied and m.reads:
            names = ", ".join(f"{r.name} ({r.kind.replace('_', ' ')})" for r in m.reads[:6])
            notes.append(
                f"{m.qualname} reads {names}, which are not its inputs: nonstrict_trace bakes them "
                "in as constants without guards, so later changes are not seen by the compiled code"
            )
    for fn in sorted({r.function for r in nonstrict.regions if not any(r.nodes.values())}):
        notes.append(
            f"{fn} produced no ATen nodes: its result was computed once while tracing and baked into "
            "the graph as a constant (it is not recomputed on later calls)"
        )
    return tuple(notes)


__all__ = ["run_notes"]
