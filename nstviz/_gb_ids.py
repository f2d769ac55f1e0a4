"""Graph-break registry ids nstviz acts on: the one set of GB-id constants.

The ids come from torch's graph-break registry (``torch/_dynamo/graph_break_registry.json``,
read at run time by :func:`nstviz.tracing.breaks.gb_registry`); the names below are
checked against it on torch 2.13 by ``tests/unit/test_gb_ids.py``.
"""

from __future__ import annotations

NONSTRICT_INPUT_REJECTED = "GB0236"
"""Invalid input type for nonstrict_trace-ed function (e.g. an explicit ``None``)."""
NONSTRICT_OUTPUT_REJECTED = "GB0251"
"""Unsupported output type for nonstrict_trace-ed function: also any fake-tensor failure inside
the function, such as a data-dependent ``.item()`` (the root cause is the converted exception)."""

NONSTRICT_REJECTED: frozenset[str] = frozenset({NONSTRICT_INPUT_REJECTED, NONSTRICT_OUTPUT_REJECTED})
"""Breaks that say nonstrict_trace could not trace a marked function."""

DATA_DEPENDENT: frozenset[str] = frozenset({"GB0033", "GB0036", "GB0124", "GB0170"})
"""Data-dependent operator, dynamic shape operator, ``Tensor.item()``, data-dependent branching."""

__all__ = [
    "DATA_DEPENDENT",
    "NONSTRICT_INPUT_REJECTED",
    "NONSTRICT_OUTPUT_REJECTED",
    "NONSTRICT_REJECTED",
]
