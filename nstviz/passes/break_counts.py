"""Per break: how many times Dynamo's tracing reached it, and how many graph breaks it caused.

A break deep inside inlined code is logged once per frame Dynamo starts and abandons, and
Dynamo does not count every logged break as a graph break. The two counts a user can check:

* **graph breaks caused** (:attr:`Break.caused`): the break's share of Dynamo's own counter,
  ``torch._dynamo.utils.counters["graph_break"]``. Live runs measure it (the counter's increase
  after each graph-break artifact); offline logs apply Dynamo's rule to the artifact's text
  (:func:`nstviz.capture.convert.counts_as_graph_break`). Over a run's breaks it sums to
  :attr:`Run.dynamo_graph_breaks`. :attr:`Break.splits` names the frame compiles whose graph it
  split (tlparse ids, e.g. ``TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0``).
* **times reached** (:attr:`Break.count`): the graph-break artifacts, i.e. tlparse's graph-break
  entries: how often Dynamo's tracing got there, restarts and abandoned frames included.

Breaks are ranked by ``caused``, then ``reached`` (most first; fatal breaks, which stop the
compile, first among equals), then first seen: :func:`rank_breaks` is the one order used by
the advisor, ``summary()``, the CLI and (mirrored in ``js/src/ui/format.js``) the viewer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nstviz.report import Break, Run

__all__ = [
    "BreakCount",
    "break_counts",
    "count_of",
    "counts_text",
    "dynamo_counter_total",
    "entry_stack",
    "rank_breaks",
    "ranked",
    "short_counts",
    "splits_text",
]

_ID_RE = re.compile(r"^\[?(?P<frame>\d+)/(?P<compile>\d+)")


@dataclass(frozen=True)
class BreakCount:
    """The two counts of one break."""

    reached: int
    """Trace events: how often Dynamo's tracing reached the break (tlparse's graph-break entries)."""
    caused: int
    """Graph breaks it caused: its share of Dynamo's ``counters["graph_break"]``."""
    exact: bool = True
    """False for Reports made before nstviz measured ``caused``: then it is estimated as the
    distinct frames that logged the break (recompiles and restart attempts folded)."""


def _frame(cid: str) -> str | None:
    m = _ID_RE.match(cid.strip())
    return m["frame"] if m else None


def count_of(b: Break) -> BreakCount:
    """Both counts of one break (``caused`` estimated for Reports that do not record it)."""
    if b.caused is not None:
        return BreakCount(reached=b.count, caused=b.caused)
    if b.fatal:  # a fullgraph error stops the compile: Dynamo counts no graph break for it
        return BreakCount(reached=b.count, caused=0)
    frames = {c for c in (_frame(x) for x in b.compile_ids) if c}
    caused = len(frames) if frames else (1 if b.count else 0)
    return BreakCount(reached=b.count, caused=min(caused, b.count) if b.count else caused, exact=False)


def _rank_key(b: Break) -> tuple[int, int, bool]:
    c = count_of(b)
    return (-c.caused, -c.reached, not b.fatal)


def rank_breaks(breaks: Iterable[Break]) -> list[Break]:
    """``breaks`` ranked by graph breaks caused, then times reached, fatal first, then first seen."""
    return sorted(breaks, key=_rank_key)


def break_counts(run: Run) -> list[tuple[Break, BreakCount]]:
    """Every break of ``run`` with its counts, in the run's order (first seen)."""
    return [(b, count_of(b)) for b in run.breaks]


def ranked(run: Run) -> list[tuple[Break, BreakCount]]:
    """The breaks of ``run`` with their counts, ranked (:func:`rank_breaks`)."""
    return [(b, count_of(b)) for b in rank_breaks(run.breaks)]


def splits_text(b: Break) -> str:
    """``"TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0"``: the frames it split.

    A compile split more than once is written once with its count (``"4/0×3"``).
    """
    by_fn: dict[str, list[str]] = {}
    for s in b.splits:
        times = f"×{s.count}" if s.count > 1 else ""
        by_fn.setdefault(s.function or "?", []).append(s.compile_id + times)
    return ", ".join(f"{fn} {' '.join(ids)}" for fn, ids in by_fn.items())


def counts_text(b: Break) -> str:
    """``"caused 4 graph breaks (TinyNet.forward 0/0, ...), reached 4×"`` (one line, plain text)."""
    c = count_of(b)
    if b.fatal and not c.caused:
        caused = "stopped the compile (fullgraph)"
    else:
        caused = f"caused {c.caused} graph break{'' if c.caused == 1 else 's'}" + ("" if c.exact else " (estimated)")
        where = splits_text(b)
        if where:
            caused += f" ({where})"
    return f"{caused}, reached {c.reached}×"


def short_counts(b: Break) -> str:
    """``"caused 4 graph breaks, reached 4×"`` (or ``"fatal, reached 1×"``), for one-line lists."""
    c = count_of(b)
    if b.fatal and not c.caused:
        return f"fatal, reached {c.reached}×"
    est = "" if c.exact else "~"
    return f"caused {est}{c.caused} graph break{'' if c.caused == 1 else 's'}, reached {c.reached}×"


def dynamo_counter_total(counter: dict) -> int:
    """Dynamo's own total of graph breaks in ``counter`` (``counters["graph_break"]``: reason -> count)."""
    return sum(counter.values())


def entry_stack(b: Break, entry_files_functions: Iterable[tuple[str, str]]) -> Sequence:
    """The break's stack starting at the first frame in ``entry_files_functions``.

    Captured Reports already start stacks at the compiled entry point
    (:func:`nstviz.capture.convert.link_breaks`); this is for stacks recorded before.

    Args:
        b: the break.
        entry_files_functions: ``(file, function)`` of the frames Dynamo compiled.
    """
    stack = list(b.stack)
    keys = set(entry_files_functions)
    for i, f in enumerate(stack):
        if (f.file, f.function) in keys:
            return stack[i:]
    return stack
