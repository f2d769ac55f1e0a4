"""Offline nstviz: record one run anywhere, read TORCH_TRACE logs, diff runs per rank.

Modules, one job each:

- :mod:`~nstviz.offline.tracelog`: streaming reader of TORCH_TRACE logs (records, payloads,
  counts of skipped / unknown / truncated entries);
- :mod:`~nstviz.offline.graph_text`: ``print_readable`` graph text -> Report nodes and edges;
- :mod:`~nstviz.offline.ingest`: one rank's log -> a single-run Report (``nstviz ingest``);
- :mod:`~nstviz.offline.record`: one run of a script under the recorder, on any rank
  (``nstviz record``);
- :mod:`~nstviz.offline.diff`: two sides, per rank -> a full Report with cross-rank findings
  (``nstviz diff``, ``nstviz check BEFORE AFTER``).

The CLI (:mod:`nstviz.cli.main`) only parses options and calls these.
"""

from __future__ import annotations

__all__ = ["diff", "graph_text", "ingest", "record", "tracelog"]
