"""The six mechanisms by which nstviz misjudged code users post (tests/users/README.md).

Each test is a small cell of our own that reproduces one mechanism; the real reproducers
are in ``corpus.py`` and checked by ``test_corpus.py``.
"""

from __future__ import annotations

import numpy as np

import nstviz

# 5. numpy outputs: a cell whose results are an ndarray and a numpy scalar ------------------

NUMPY_CELL = '''
import torch
def helper(x):
    return x.sin() + 1
@torch.compile(backend="eager")
def f(x):
    return helper(x) * 2
out = f(torch.ones(3)).numpy()
total = np.float32(out.sum())
'''


def test_numpy_outputs_are_compared():
    report = nstviz.trace_code(NUMPY_CELL, {"np": np}, nonstrict=["helper"], backend="eager")
    check = report.outputs
    assert check.skipped_reason in (None, ""), check.skipped_reason
    assert check.match is True
    paths = {d.path for c in check.comparisons for d in c.details}
    assert {"out", "total"} <= paths


# 6. a None *return* is not a None *input* ---------------------------------------------------

NONE_RETURN_CELL = '''
import torch
SEEN = []
def record(x):
    torch._dynamo.graph_break()
    SEEN.append(tuple(x.shape))
@torch.compile(backend="eager")
def f(x):
    y = x * 2
    record(y)
    return y + 1
out = f(torch.ones(3))
'''


def test_none_return_is_not_offered_the_none_input_adapter():
    report = nstviz.trace_code(NONE_RETURN_CELL, {}, auto=True, backend="eager")
    by_name = {c.function: c for c in report.candidates}
    assert "adapter: record" not in by_name, by_name.get("adapter: record")
    failed = by_name["record"]
    assert failed.gb_id == "GB0251"
    assert "(args, kwargs)" not in failed.error
    assert "returns None" in failed.error
    notes = " ".join(m.warning or "" for m in report.runs["attempt-1"].marked)
    assert "(args, kwargs)" not in notes and "returns None" in notes


# 3. a frame Dynamo skipped (a break inside a loop, GB7000) that a fix compiles ---------------

LOOP_SKIP_CELL = '''
import torch
@torch.compile(backend="eager")
def running_sum(x):
    total = x.new_zeros(())
    for i in range(3):
        total = total + x[i].item() * 2
    return total
out = running_sum(torch.arange(3.0))
'''


def test_a_fix_that_compiles_a_skipped_frame_is_an_improvement():
    report = nstviz.trace_code(LOOP_SKIP_CELL, {}, auto=True, backend="eager")
    base = report.counts["baseline"]
    assert (base.graphs, base.breaks) == (0, 1)
    skipped = "Dynamo skipped the frame running_sum: a break inside a loop (GB7000)"
    assert skipped in report.headline.text
    assert skipped in report.summary()
    cfg = {c.function: c for c in report.candidates}["config: capture_scalar_outputs=True"]
    assert (cfg.status, cfg.outputs_match) == ("improved", True), cfg.error
    assert "1 frame(s) Dynamo ran eagerly compile now (0 -> 1 graphs)" in cfg.error
    rec = report.recommendation
    assert rec is not None and rec.config == ("capture_scalar_outputs",)
    assert (rec.graphs_before, rec.graphs_after, rec.breaks_after) == (0, 1, 0)


# 2. the None adapter for a function the cell itself defines ---------------------------------

NONE_ARG_CELL = '''
import torch
def scale(x, bias=None):
    torch._dynamo.graph_break()
    return x * 2 if bias is None else x * 2 + bias
@torch.compile(backend="eager")
def f(x):
    y = x + 1
    y = scale(y, None)
    return y.sin()
out = f(torch.ones(3))
'''


def test_none_adapter_takes_effect_for_a_function_the_cell_defines():
    report = nstviz.trace_code(NONE_ARG_CELL, {}, auto=True, backend="eager")
    by = {c.function: c for c in report.candidates}
    adapter = by["adapter: scale"]
    assert (adapter.status, adapter.outputs_match) == ("improved", True), adapter.error
    assert adapter.error == "3 -> 1 graphs"
    rec = report.recommendation
    assert rec is not None and rec.adapters == ("scale",)
    assert (report.counts["baseline"].graphs, report.counts["nonstrict"].graphs) == (3, 1)
    assert all(m.applied for m in report.runs["nonstrict"].marked), report.runs["nonstrict"].marked


# 1. marking the function torch.compile compiles -----------------------------------------------

COMPILED_ENTRY_CELL = '''
import torch
@torch.compile(backend="eager")
def pair_sum(x):
    y = x * 2
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    p = Pair(y.sin(), y.cos())
    return p.a + p.b
out = pair_sum(torch.ones(3))
'''


def test_marking_the_compiled_function_does_what_the_decorator_does():
    report = nstviz.trace_code(COMPILED_ENTRY_CELL, {}, nonstrict=["pair_sum"], backend="eager")
    # truth (torch alone, tests/users/README.md): 2 graphs and GB8977 as written; with
    # @torch.compile over @torch._dynamo.nonstrict_trace by hand, 1 graph and no break
    assert (report.counts["baseline"].graphs, report.counts["baseline"].breaks) == (2, 1)
    assert report.runs["baseline"].breaks[0].gb_id == "GB8977"
    assert (report.counts["nonstrict"].graphs, report.counts["nonstrict"].breaks) == (1, 0)
    (mark,) = report.runs["nonstrict"].marked
    assert mark.applied, mark.warning
    assert report.outputs.match is True


def test_the_advisor_tries_the_compiled_function():
    report = nstviz.trace_code(COMPILED_ENTRY_CELL, {}, auto=True, backend="eager")
    by = {c.function: c for c in report.candidates}
    cand = by["pair_sum"]
    assert (cand.status, cand.outputs_match, cand.error) == ("improved", True, "2 -> 1 graphs")
    assert report.recommendation is not None and report.recommendation.functions == ("pair_sum",)


def _pair_sum(x):
    y = x * 2

    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    p = Pair(y.sin(), y.cos())
    return p.a + p.b


def test_compare_marks_the_function_it_compiles_itself_as_the_decorator_does():
    import torch

    # truth (torch alone): torch.compile(_pair_sum) gives 2 graphs and GB8977; with
    # @torch._dynamo.nonstrict_trace on _pair_sum by hand, 1 graph and no break
    report = nstviz.compare(_pair_sum, torch.ones(3), nonstrict=[_pair_sum], backend="eager", time=False)
    assert (report.counts["baseline"].graphs, report.counts["baseline"].breaks) == (2, 1)
    assert (report.counts["nonstrict"].graphs, report.counts["nonstrict"].breaks) == (1, 0)
    (mark,) = report.runs["nonstrict"].marked
    assert mark.applied, mark.warning
    assert report.outputs.match is True
    auto = nstviz.compare(_pair_sum, torch.ones(3), auto=True, backend="eager", time=False)
    assert auto.recommendation is not None and auto.recommendation.functions == ("_pair_sum",), [
        (c.function, c.status, c.error) for c in auto.candidates]


# 4. source rewrites tried from a cell, verified on other inputs of the cell's compiled calls ---

BRANCH_CELL = '''
import torch
@torch.compile(backend="eager")
def clip_scale(x):
    s = x.abs().max()
    if s > 1:
        x = x / s
    return x * 2
out = clip_scale(torch.linspace(-3, 3, 7))
'''


def test_a_cell_gets_its_rewrites_tried_and_verified_on_other_inputs():
    report = nstviz.trace_code(BRANCH_CELL, {}, auto=True, backend="eager")
    by = {c.function: c for c in report.candidates}
    rewrites = [c for c in report.candidates if c.kind == "rewrite" and c.status == "improved"]
    assert rewrites, [(c.function, c.status, c.error) for c in report.candidates]
    (where,) = [c for c in rewrites if "branch-where" in c.function]
    assert "outputs equal eager on 2 more input sets of the same shapes" in where.error, where.error
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after) == (report.counts["baseline"].graphs, 1)
    assert "torch.where" in rec.code
    assert by  # every candidate says what it did
