"""What torch 2.14 adds, used where the user's torch has it, on real compiles.

- ``torch.compiler.nonstrict_trace`` (2.14's public name): a mark written with it is an
  ``in_source`` mark like ``torch._dynamo.nonstrict_trace``, lifted by ``baseline="strict"``,
  and the advisor's pasted code spells the decorator that way where the torch has it.
- ``None`` leaves as nonstrict_trace inputs (pytorch PR #185742): the probe nstviz asks
  (:func:`_torch_compat.nonstrict_accepts_none`) must say what this torch really does.
- ``torch._dynamo.decorators.leaf_function`` (present in 2.13.0 and 2.14.1): a function the code
  decorated with it is listed with the run's marks, as a ``leaf_function``, not as a region.
"""

from __future__ import annotations

import json

import pytest
import torch

import nstviz
from nstviz.capture import _torch_compat
from nstviz.report import Report

HAS_PUBLIC = callable(getattr(torch.compiler, "nonstrict_trace", None))
NO_PUBLIC = "torch.compiler.nonstrict_trace is not in this torch (2.13 has only torch._dynamo.nonstrict_trace)"
LEAF = _torch_compat.leaf_function_decorator()


def _eval_spelling(spelling: str):
    obj = torch
    for part in spelling.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def test_pasted_code_spells_nonstrict_trace_as_this_torch_has_it():
    spelling = _torch_compat.nonstrict_trace_spelling()
    assert spelling == ("torch.compiler.nonstrict_trace" if HAS_PUBLIC else "torch._dynamo.nonstrict_trace")
    decorator = _eval_spelling(spelling)

    def helper(x):
        torch._dynamo.graph_break()
        return x.cos()

    marked = decorator(helper)
    gms = []

    def backend(gm, example_inputs):
        gms.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(lambda x: marked(x.sin()) + 1, backend=backend, fullgraph=True)(torch.ones(3))
    targets = [getattr(n.target, "__name__", "") for g in gms for n in g.graph.nodes if n.op == "call_function"]
    assert any(_torch_compat.FLAT_APPLY_NAME in t for t in targets)  # the spelling really marks


PUBLIC_CELL = """
import torch

@torch.compiler.nonstrict_trace
def helper(x):
    torch._dynamo.graph_break()
    return x.cos()

def step(x):
    return helper(x.sin()) + 1

y = torch.compile(step, backend="aot_eager")(torch.ones(3))
"""


@pytest.mark.skipif(not HAS_PUBLIC, reason=NO_PUBLIC)
def test_a_mark_written_with_the_public_name_is_an_in_source_mark_and_is_lifted():
    ns: dict = {}
    report = nstviz.trace_code(PUBLIC_CELL, ns, baseline="strict")
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [b.location.code for b in base.breaks] == ["torch._dynamo.graph_break()"]  # lifted: the break is back
    assert nst.breaks == () and len(nst.regions) == 1
    assert [(m.qualname, m.origin, m.decorator, m.applied) for m in nst.marked] == [
        ("helper", "in_source", "nonstrict_trace", True)
    ]
    assert torch.allclose(ns["y"], torch.ones(3).sin().cos() + 1)
    assert torch.compiler.nonstrict_trace.__module__ == "torch.compiler"  # nothing left patched


def test_the_none_probe_says_what_this_torch_does():
    @torch._dynamo.nonstrict_trace
    def takes_optional(x, mask):
        return x if mask is None else x * mask

    torch._dynamo.reset()
    fn = torch.compile(lambda x: takes_optional(x, None) + 1, backend="eager", fullgraph=True)
    if _torch_compat.nonstrict_accepts_none():
        assert torch.equal(fn(torch.ones(2)), torch.full((2,), 2.0))
    else:
        with pytest.raises(torch._dynamo.exc.Unsupported, match="Invalid input type for nonstrict_trace"):
            fn(torch.ones(2))


LEAF_CELL = """
import torch
from torch._dynamo.decorators import leaf_function

seen = []

@leaf_function
def log_stats(x):
    seen.append(float(x.mean()))  # runs eagerly, at run time
    return (x.mean(dim=1),)

@log_stats.register_fake
def _log_stats_fake(x):
    return (x.new_empty(x.shape[0]),)

def helper(x):
    torch._dynamo.graph_break()
    return x * 3

def step(x):
    (s,) = log_stats(x.sin())
    return helper(s) * 2

y = torch.compile(step, backend="aot_eager")(torch.ones(3, 4))
"""


@pytest.mark.skipif(LEAF is None, reason="torch._dynamo.decorators.leaf_function is not in this torch")
def test_a_leaf_function_of_the_code_is_shown_like_a_mark_not_a_region():
    ns: dict = {}
    report = nstviz.trace_code(LEAF_CELL, ns, nonstrict=["helper"])
    for name in ("baseline", "nonstrict"):
        run = report.runs[name]
        leaf = [m for m in run.marked if m.decorator == "leaf_function"]
        assert [(m.qualname, m.origin, m.applied, m.line_start) for m in leaf] == [("log_stats", "in_source", True, 7)]  # its @leaf_function line
        assert leaf[0].reads == ()  # its body runs eagerly: nothing is baked in
        assert all(r.function != "log_stats" for r in run.regions)
    nst = report.runs["nonstrict"]
    assert [(m.qualname, m.decorator) for m in nst.marked] == [("helper", "nonstrict_trace"), ("log_stats", "leaf_function")]
    assert [r.function for r in nst.regions] == ["helper"] and nst.breaks == ()
    assert len(report.runs["baseline"].breaks) == 1
    # the real body ran, eagerly (the last run's namespace is what the cell leaves: one call)
    assert ns["seen"] == [pytest.approx(float(torch.ones(3, 4).sin().mean()))]
    again = Report.from_json(report.to_json())
    assert [m.decorator for m in again.runs["nonstrict"].marked] == ["nonstrict_trace", "leaf_function"]
    assert '"decorator": "leaf_function"' in json.dumps(json.loads(report.to_json()))
