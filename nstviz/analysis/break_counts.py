"""Per break: how many times the code reached it, and how many graph breaks it caused.

A break deep inside inlined code is logged once per frame Dynamo starts and abandons: the
root frame is re-analysed (a new *attempt* of the same compile, tlparse's ``[0/0_1]``) and the
same site is logged again, although in the end it splits that frame's graph once. So
``Break.count`` (trace events) over-counts. What a user can check against Dynamo:

* **graph breaks caused** = the distinct frames (tlparse's frame id; recompiles
  ``4/0``..``4/3`` and restart attempts folded) that logged it: each such frame's graph was
  split there. This is close to, but not yet equal to, Dynamo's own
  ``torch._dynamo.utils.counters["graph_break"]`` (BigBird eval: 12 + 1 here, 11 there), which
  does not count frames Dynamo skipped as a whole. The exact total per run is
  ``Run.dynamo_graph_breaks`` (the counter's increase during the run, recorded by the runner).
* **times reached** = the trace events (``Break.count``), i.e. how often Dynamo's tracing got
  there, restarts included.

Ranking by ``caused`` (then ``reached``) puts the breaks that cost graphs first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nstviz.report import Break, Run

__all__ = ["BreakCount", "break_counts", "dynamo_counter_total", "entry_stack", "ranked"]

_ID_RE = re.compile(r"^\[?(?P<frame>\d+)/(?P<compile>\d+)")


@dataclass(frozen=True)
class BreakCount:
    """The two counts of one break."""

    reached: int
    """Trace events: how often Dynamo's tracing reached the break (restarts included)."""
    caused: int
    """Graph breaks it caused: distinct frames that logged it (recompiles and attempts folded)."""


def _compile(cid: str) -> str | None:
    m = _ID_RE.match(cid.strip())
    return m["frame"] if m else None


def count_of(b: Break) -> BreakCount:
    """Both counts of one break (``caused`` falls back to 1 when it has no compile ids)."""
    compiles = {c for c in (_compile(x) for x in b.compile_ids) if c}
    caused = len(compiles) if compiles else (1 if b.count else 0)
    return BreakCount(reached=b.count, caused=min(caused, b.count) if b.count else caused)


def break_counts(run: Run) -> list[tuple[Break, BreakCount]]:
    """Every break of ``run`` with its counts, in the run's order."""
    return [(b, count_of(b)) for b in run.breaks]


def ranked(run: Run) -> list[tuple[Break, BreakCount]]:
    """The breaks ranked by graph breaks caused, then times reached (most first)."""
    return sorted(break_counts(run), key=lambda bc: (-bc[1].caused, -bc[1].reached))


def dynamo_counter_total(counter: dict) -> int:
    """Dynamo's own total of graph breaks in ``counter`` (``counters["graph_break"]``: reason -> count)."""
    return sum(counter.values())


def entry_stack(b: Break, entry_files_functions: Iterable[tuple[str, str]]) -> Sequence:
    """The break's stack starting at the compiled entry point (frames outside it dropped).

    Args:
        b: the break.
        entry_files_functions: ``(file, function)`` of the frames Dynamo compiled first.
    """
    stack = list(b.stack)
    keys = set(entry_files_functions)
    for i, f in enumerate(stack):
        if (f.file, f.function) in keys:
            return stack[i:]
    return stack
