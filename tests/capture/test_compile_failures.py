"""Compile failures come from Dynamo's own events, also when the user's code catches them (issue 11, 7c)."""

from __future__ import annotations

import pytest

import nstviz

pytestmark = pytest.mark.usefixtures("warm_backends")

CAUGHT = '''
import torch

def f(x):
    y = x.sin()
    print("inside f")
    return y.cos()

cf = torch.compile(f, fullgraph=True, backend="aot_eager")
x = torch.ones(3)
try:
    out = cf(x)
except Exception:
    out = None
'''


def test_caught_fullgraph_failure_is_a_compile_failure_in_the_headline():
    report = nstviz.trace_code(CAUGHT, {})
    base = report.runs["baseline"]
    assert base.error is None  # the user's code caught it
    failed = [c for c in base.compiles if c.fail_reason]
    assert [(c.function, c.graph_ids) for c in failed] == [("f", ())]
    assert [(c.kind, c.tone) for c in report.headline.chips[:2]] == [("note", "neutral"), ("failure", "bad")]
    assert report.headline.text == (
        "nothing was marked (baseline only), "
        "compile failed in f: Dynamo does not know how to trace builtin operator `print` with argument types "
        "['str'] (has_kwargs…, 0 breaks, 0 graphs, outputs not checked (no second run to compare with)"
    )
