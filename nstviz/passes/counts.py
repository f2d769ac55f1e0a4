"""Headline numbers of one run (:class:`RunCounts`): the one definition of the counts.

``graphs`` and ``ops`` are about the **Dynamo** graphs (one per compiled piece of user code,
what graph breaks split), never the ATen graphs derived from them; ``aten_ops`` counts the
forward and inference ATen graphs (what runs). Every renderer reads :attr:`Report.counts`.
"""

from __future__ import annotations

from nstviz.report.model import Run, RunCounts

_ATEN_LEVELS = ("aten_forward", "aten_inference")


def run_counts(run: Run) -> RunCounts:
    """Graphs (Dynamo level), distinct breaks, times reached and graph breaks counted, ops...

    ``ops`` counts ``call_*`` nodes of the Dynamo graphs; ``aten_ops`` those of the forward
    and inference ATen graphs. ``full_graph`` is true when the run compiled exactly one
    Dynamo graph with no break.
    """
    dynamo = [g for g in run.graphs if g.level == "dynamo"]
    graph_breaks = run.dynamo_graph_breaks
    if graph_breaks is None and run.breaks and all(b.caused is not None for b in run.breaks):
        graph_breaks = sum(b.caused or 0 for b in run.breaks)
    elif graph_breaks is None and not run.breaks and run.origin is not None:
        graph_breaks = 0
    aten = [g for g in run.graphs if g.level in _ATEN_LEVELS]
    inlined = sum(len(names) for r in run.regions for names in r.nodes.values())
    return RunCounts(
        graphs=len(dynamo),
        breaks=len(run.breaks),
        break_hits=sum(b.count for b in run.breaks),
        ops=sum(g.op_count for g in dynamo),
        aten_ops=sum(g.op_count for g in aten),
        regions=len(run.regions),
        inlined_nodes=inlined,
        full_graph=len(dynamo) == 1 and not run.breaks and run.error is None,
        graph_breaks=graph_breaks,
    )
