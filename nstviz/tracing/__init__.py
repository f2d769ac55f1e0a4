"""The torch-free layer: what nstviz reads from text torch wrote (logs, tracebacks, paths).

Nothing in this package imports torch, so ``nstviz ingest``, ``diff`` and ``view`` run on a
machine without it (and start in a fraction of a second). ``tests/offline`` checks that the
offline commands leave ``torch`` out of ``sys.modules``.

- :mod:`nstviz.tracing.stacks`: which file is torch's, nstviz's, the standard library's or the
  user's (by the shape of its path and the log's own paths), user stacks, source text;
- :mod:`nstviz.tracing.events`: the structured-trace event nstviz keeps;
- :mod:`nstviz.tracing.breaks`: graph breaks and compiles from trace events and their text.
"""

MAX_NODES_PER_GRAPH = 60_000
"""Graphs with more nodes keep only the first ones (``Graph.truncated``; a note says so)."""
MAX_GUARDS = 200
"""Guard lines kept per compile."""
