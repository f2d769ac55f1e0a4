"""Remedy: a boolean chain tests what Python knows before a data-dependent size (``static-first``)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_static_first, verify
from tests.rewrites import toys_bool_order as toys
from tests.rewrites._paste import graphs_in_fresh_process

GUARD = ("Consider annotating your code using torch._check*(). Could not guard on data-dependent expression "
         "u0 > 1 (unhinted: u0 > 1).  (Size-like symbols: none)")
FLAG = ("capture_dynamic_output_shape_ops",)


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _sets():
    keep = torch.tensor([1, 0, 1, 1, 0, 1], dtype=torch.bool)
    return [(torch.randn(6, 8), keep), (torch.randn(6, 8), keep.flip(0))]


def test_the_known_operands_go_first_and_the_value_stays_a_bool():
    p = propose(toys.attend, BreakSite(None, _line(toys.attend, "q_length > 1"), GUARD, flags=FLAG))
    assert [r.remedy for r in p.rewrites][:1] == ["static-first"], p.notes
    r = p.rewrites[0]
    assert "    is_causal = bool(mask is None and is_causal and (q_length > 1))\n" in r.source
    assert "Dynamo cannot guard on u0 > 1 while tracing" in r.source
    assert r.config == {"capture_dynamic_output_shape_ops": True}
    v = verify(toys.attend, r, _sets(), entry=toys.attend_kept)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v


def test_a_test_keeps_its_truth_without_bool():
    brk = BreakSite(None, _line(toys.causal_if_long, "q.shape[-2] > 1"), GUARD)
    r = propose_static_first(toys.causal_if_long, brk).rewrites[0]
    assert "    if mask is None and is_causal and (q.shape[-2] > 1):\n" in r.source
    assert r.config == {}
    q = torch.randn(1, 4, 3)
    with r.applied():
        assert torch.equal(toys.causal_if_long(q, None, True), q.cumsum(-2))
        assert torch.equal(toys.causal_if_long(q, None, False), q)


def test_no_rewrite_without_a_guard_or_without_a_known_operand_after_the_size():
    line = _line(toys.attend, "q_length > 1")
    assert not propose_static_first(toys.attend, BreakSite("GB0170", line, "Data-dependent branching")).fits
    assert not propose_static_first(toys.attend, BreakSite(None, line - 1, GUARD)).fits  # `q_length = q.shape[-2]`
    first_already = BreakSite(None, _line(toys.already_ordered, "is_causal and"), GUARD)
    assert not propose_static_first(toys.already_ordered, first_already).fits


def test_the_advisor_answers_the_flag_it_did_not_keep_and_the_paste_compiles_whole():
    import nstviz

    report = nstviz.compare(toys.attend_kept, *_sets()[0], auto=True, backend="eager", time=False)
    status = {c.function: c.status for c in report.candidates}
    assert status["config: capture_dynamic_output_shape_ops=True"] == "worse", report.candidates
    assert status["rewrite: attend (static-first, capture_dynamic_output_shape_ops=True)"] == "improved"
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after) == (2, 1)
    assert "torch._dynamo.config.capture_dynamic_output_shape_ops = True" in rec.code
    call = "toys_bool_order.attend_kept, (torch.randn(6, 8), torch.tensor([1, 0, 1, 1, 0, 1], dtype=torch.bool))"
    setup = "from tests.rewrites import toys_bool_order"
    assert graphs_in_fresh_process([], "", call, setup) == 2
    assert graphs_in_fresh_process([], rec.code, call, setup) == 1
