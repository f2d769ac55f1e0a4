"""The advisor's order for branches on tensor values: rewrites before marks, no marks a failure already doomed."""

from __future__ import annotations

import torch

import nstviz

SEEN: list[int] = []


def inner(x):
    """A branch on a value with a side effect: no rewrite takes it, and nonstrict_trace cannot branch on a fake."""
    y = x * 2
    if y.sum() > 0:
        SEEN.append(1)
        y = y + 1
    return y.cos()


def middle(x):
    return inner(x + 1) * 3


def outer(x):
    return middle(x.sin()) - 1


def test_after_the_inner_mark_fails_on_data_dependent_code_its_callers_are_not_tried():
    report = nstviz.compare(outer, torch.randn(4), auto=True, budget_s=300, max_attempts=8)
    got = {c.function: c for c in report.candidates}
    assert (got["inner"].status, got["inner"].run) == ("failed", "attempt-1"), got["inner"]
    assert "DataDependentOutputException" in got["inner"].error
    assert got["middle"].run is None and got["middle"].status == "skipped"
    assert got["middle"].error.startswith("not tried: it calls inner, whose mark failed on data-dependent code"), got["middle"]
    assert report.recommendation is None


def test_a_c_call_on_tensors_becomes_a_custom_op_before_any_mark_is_tried():
    import pytest

    pytest.importorskip("scipy.optimize")
    from tests.rewrites.test_call_ops import SETS, loss

    report = nstviz.compare(loss, *SETS[0], auto=True, budget_s=300, max_attempts=4)
    got = {c.function: c for c in report.candidates}
    first = got["rewrite: match (call-op)"]
    assert (first.run, first.status) == ("attempt-1", "improved"), first
    assert got["match"].run is None  # the mark (scipy on fake tensors) is not needed any more
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after, rec.outputs_match) == (2, 1, True)
    assert "torch.ops.nstviz_fix.linear_sum_assignment(c[i])" in rec.code
