"""Remedy: two sizes equal by construction get a ``torch._check`` (``size-check``; real compiles)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.rewrites import BreakSite, graph_count, propose, propose_size_check, verify
from tests.rewrites import toys
from tests.rewrites._paste import graphs_in_fresh_process

GUARD = "Could not guard on data-dependent expression Eq(u1, u0) (unhinted: Eq(u1, u0))."


def _ce_line() -> int:
    lines, first = inspect.getsourcelines(toys.focal_loss)
    return first + next(i for i, t in enumerate(lines) if "binary_cross_entropy" in t)


def _sets():
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(2, 5, 7, generator=g, requires_grad=True), torch.rand(2, 5, 7, generator=g) > 0.5,
             torch.rand(2, 5, 7, generator=g) > p) for p in (0.3, 0.7)]


def test_the_check_goes_before_the_call_and_the_graphs_go_from_two_to_one():
    p = propose(toys.focal_loss, BreakSite(None, _ce_line(), GUARD))
    assert [r.remedy for r in p.rewrites][:1] == ["size-check"], p.notes
    r = p.rewrites[0]
    assert r.config == {"capture_dynamic_output_shape_ops": True}
    body = r.source.splitlines()
    at = next(i for i, t in enumerate(body) if "binary_cross_entropy" in t)
    assert body[at - 1].strip() == "torch._check(inputs.shape == targets.shape)"
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        assert graph_count(toys.masked_logits_loss, _sets()[0]) == 3  # the flag alone: the guard breaks
    v = verify(toys.focal_loss, r, _sets(), entry=toys.masked_logits_loss)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    assert torch._dynamo.config.capture_dynamic_output_shape_ops is False


def test_no_check_without_two_equal_unbacked_sizes_in_the_message():
    other = BreakSite(None, _ce_line(), "Could not guard on data-dependent expression u0 <= 4")
    p = propose_size_check(toys.focal_loss, other)
    assert p.rewrites == [] and not p.fits


def test_the_advisor_keeps_the_check_after_the_flag_and_the_paste_compiles_whole():
    import nstviz

    report = nstviz.compare(toys.masked_logits_loss, *_sets()[0], auto=True, backend="eager", time=False)
    kept = [c.function for c in report.candidates if c.status == "improved"]
    assert "rewrite: focal_loss (size-check, capture_dynamic_output_shape_ops=True)" in kept, report.candidates
    rec = report.recommendation
    assert rec is not None and rec.graphs_after == 1
    call = "masked_logits_loss, (torch.randn(2, 5, 7), torch.rand(2, 5, 7) > 0.5, torch.rand(2, 5, 7) > 0.3)"
    assert graphs_in_fresh_process([toys.focal_loss, toys.masked_logits_loss], rec.code, call) == 1
