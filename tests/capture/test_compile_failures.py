"""The headline never hides a problem: compile failures from Dynamo's own events, also when
the user's code catches them; compiled code that differs from eager."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch

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


def test_caught_fullgraph_failure_is_a_fatal_break_in_the_headline():
    report = nstviz.trace_code(CAUGHT, {}, filename="<caught>")
    base = report.runs["baseline"]
    assert base.error is None  # the user's code caught it
    failed = [c for c in base.compiles if c.fail_reason]
    assert [(c.function, c.graph_ids) for c in failed] == [("f", ())]
    # caught or not, the fullgraph failure is the same fatal break (issue 17)
    assert [(b.gb_id, b.fatal, b.location.line, b.location.function, b.caused) for b in base.breaks] == [
        ("GB0059", True, 6, "f", 0)
    ]
    assert [(c.kind, c.text, c.tone) for c in report.headline.chips] == [
        ("note", "nothing was marked (baseline only)", "neutral"),
        ("breaks", "1 break", "neutral"),
        ("graphs", "fullgraph failed: 0 graphs", "bad"),
        ("outputs", "outputs not checked (no second run to compare with)", "neutral"),
    ]
    uncaught = nstviz.trace_code(CAUGHT.split("try:")[0] + "out = cf(x)\n", {}, filename="<caught>")
    assert uncaught.runs["baseline"].error is not None
    assert [dataclasses.replace(b, compile_ids=()) for b in uncaught.runs["baseline"].breaks] == [
        dataclasses.replace(b, compile_ids=()) for b in base.breaks
    ]
    assert uncaught.headline.text == report.headline.text


def _breaking_helper(x):
    torch._dynamo.graph_break()
    return x + 1


def _differs_when_compiled(x):
    return _breaking_helper(x) * (2.0 if torch.compiler.is_compiling() else 1.0)


def test_compiled_differs_from_eager_is_red_even_when_baseline_and_nonstrict_agree():
    report = nstviz.compare(_differs_when_compiled, torch.ones(3), nonstrict=["_breaking_helper"])
    assert report.outputs.nondeterministic is False
    assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [
        ("baseline", "nonstrict", True),
        ("eager", "baseline", False),
        ("eager", "nonstrict", False),
    ]
    assert [(c.kind, c.text, c.tone) for c in report.headline.chips] == [
        ("breaks", "1 break → 0", "good"),
        ("graphs", "2 graphs → 1", "good"),
        ("outputs", "outputs match", "good"),
        ("outputs", "compiled differs from eager (max |Δ| 2)", "bad"),
    ]


RECOMPILES = '''
import torch

def scale(x, mode):
    torch._dynamo.graph_break()
    return x * len(mode)

@torch.compile(backend="eager")
def f(x, mode):
    return scale(x.sin(), mode).cos()

x = torch.ones(3)
for i in range(10):
    y = f(x, "m" * i)
'''


def test_recompile_limit_reads_as_such_not_as_a_compile_failure():
    # BigBird train hits recompile_limit (8) in _get_single_block_row_attention: the frame then
    # runs eagerly; the headline said "compile failed: ...exceeding the recompile_limit".
    report = nstviz.trace_code(RECOMPILES, {}, nonstrict=["scale"])
    # the cell's name counts the cells run in this process (<nstviz-cell-N>): any N
    assert re.fullmatch(
        re.escape("recompile limit hit: scale (<nstviz-cell-") + r"\d+"
        + re.escape(">:5) runs eagerly, 1 break → 0, 10 graphs → 8, nonstrict recompile limit hit: f (<nstviz-cell-")
        + r"\d+" + re.escape(">:8) runs eagerly, outputs match"),
        report.headline.text,
    ), report.headline.text
    assert "compile failed" not in report.headline.text


REFUSED = '''
import torch

class Box:
    def __init__(self, t):
        self.t = t

def scale(b):
    torch._dynamo.graph_break()
    return b.t * 2

@torch.compile(fullgraph=True, backend="aot_eager")
def f(x):
    return scale(Box(x)) + 1

x = torch.ones(3)
try:
    out = f(x)
except Exception:
    out = None
'''


def test_caught_nonstrict_failure_is_red_and_compares_nothing():
    # torch refuses the unregistered class: the nonstrict compile fails too, and the code catches it
    report = nstviz.trace_code(REFUSED, {}, nonstrict=["scale"], filename="<refused>")
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert (base.error, nst.error) == (None, None)
    assert [(b.gb_id, b.fatal, b.location.line) for b in base.breaks] == [("GB0025", True, 9)]
    assert [(b.gb_id, b.fatal, b.location.line, b.reason) for b in nst.breaks] == [
        ("GB0236", True, 14, "Invalid input type for nonstrict_trace-ed function")
    ]
    why = "the baseline compile failed and the nonstrict compile failed, so their outputs cannot be compared"
    assert (report.outputs.match, report.outputs.comparisons, report.outputs.skipped_reason) == (None, (), why)
    assert [(c.kind, c.text, c.tone) for c in report.headline.chips] == [
        ("breaks", "1 break → 1", "neutral"),
        ("graphs", "0 graphs → 0", "neutral"),
        ("failure", "nonstrict fullgraph failed: Invalid input type for nonstrict_trace-ed function", "bad"),
        ("outputs", f"outputs not checked ({why})", "neutral"),
    ]
