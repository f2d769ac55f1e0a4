"""Per break: how many times Dynamo's tracing reached it, how many graph breaks it caused, the order.

A break deep inside inlined code is logged once per frame Dynamo starts and abandons, and
Dynamo does not count every logged break as a graph break. The two counts a user can check:

* **graph breaks caused** (:attr:`Break.caused`): the break's share of Dynamo's own counter,
  ``torch._dynamo.utils.counters["graph_break"]``. Live runs measure it (the counter's increase
  after each graph-break artifact); offline logs apply Dynamo's rule to the artifact's text
  (:func:`nstviz.tracing.breaks.counts_as_graph_break`). Over a run's breaks it sums to
  :attr:`Run.dynamo_graph_breaks`. :attr:`Break.splits` names the frame compiles whose graph it
  split (tlparse ids, e.g. ``TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0``).
* **times reached** (:attr:`Break.count`): the graph-break artifacts, i.e. tlparse's graph-break
  entries: how often Dynamo's tracing got there, restarts and abandoned frames included.

Both, and their texts, are computed once, when a :class:`~nstviz.report.Break` is made
(:attr:`Break.tally`); the rank order of a run's breaks likewise (:attr:`Run.break_order`):
most graph breaks caused, then most reached, fatal first among equals, then first seen. Both are
written to the Report JSON, which the viewer reads as is. This module is how Python reads them
(the advisor, ``summary()``, the CLI, the widget's static summary), and where the kind of a run's
exception is decided (:func:`error_kind`, called by the capture).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nstviz.report.model import Break, BreakTally, ErrorKind, Location, Run, break_rank_key

__all__ = [
    "break_counts",
    "count_of",
    "counts_text",
    "dynamo_counter_total",
    "entry_stack",
    "error_kind",
    "rank_breaks",
    "ranked",
    "ranked_breaks",
    "short_counts",
    "splits_text",
]


def count_of(b: Break) -> BreakTally:
    """Both counts of one break, its :attr:`Break.tally` (``caused`` estimated for Reports that do not record it)."""
    return b.tally


def rank_breaks(breaks: Iterable[Break]) -> list[Break]:
    """``breaks`` ranked by graph breaks caused, then times reached, fatal first, then first seen."""
    return sorted(breaks, key=break_rank_key)


def ranked_breaks(run: Run) -> list[Break]:
    """The breaks of ``run`` in their rank order (:attr:`Run.break_order`)."""
    return [run.breaks[i] for i in run.break_order]


def break_counts(run: Run) -> list[tuple[Break, BreakTally]]:
    """Every break of ``run`` with its counts, in the run's order (first seen)."""
    return [(b, count_of(b)) for b in run.breaks]


def ranked(run: Run) -> list[tuple[Break, BreakTally]]:
    """The breaks of ``run`` with their counts, ranked (:attr:`Run.break_order`)."""
    return [(b, count_of(b)) for b in ranked_breaks(run)]


def splits_text(b: Break) -> str:
    """``"TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0"``: the frames it split.

    A compile split more than once is written once with its count (``"4/0×3"``).
    """
    return b.tally.splits_text


def counts_text(b: Break) -> str:
    """``"caused 4 graph breaks (TinyNet.forward 0/0, ...), reached 4×"`` (one line, plain text)."""
    return b.tally.counts_text


def short_counts(b: Break) -> str:
    """``"caused 4 graph breaks, reached 4×"`` (or ``"fatal, reached 1×"``), for one-line lists."""
    return b.tally.short_text


def dynamo_counter_total(counter: dict) -> int:
    """Dynamo's own total of graph breaks in ``counter`` (``counters["graph_break"]``: reason -> count)."""
    return sum(counter.values())


def entry_stack(b: Break, entry_files_functions: Iterable[tuple[str, str]]) -> Sequence[Location]:
    """The break's stack starting at the first frame in ``entry_files_functions``.

    Captured Reports already start stacks at the compiled entry point
    (:func:`nstviz.tracing.breaks.link_breaks`); this is for stacks recorded before.

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


_CLEAN_EXITS = ("SystemExit", "SystemExit: 0", "SystemExit: None")


def error_kind(error_type: str | None, error: str | None, dynamo_names: Iterable[str]) -> ErrorKind | None:
    """What a run's exception was (:attr:`Run.error_kind`); None when the run did not raise.

    Args:
        error_type: the exception's class name (:attr:`Run.error_type`).
        error: its text as the Report holds it (:attr:`Run.error`, ``"SystemExit: 0"``).
        dynamo_names: the class names of torch's Dynamo exceptions (the running torch's, at
            capture: ``nstviz.capture._torch_compat.dynamo_exception_names()``).
    """
    if error is None and error_type is None:
        return None
    if error_type == "SystemExit":
        return "clean_exit" if error in _CLEAN_EXITS else "user"
    return "dynamo" if error_type in frozenset(dynamo_names) else "user"
