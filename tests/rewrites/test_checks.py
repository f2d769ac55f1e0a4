"""Remedy: a data-dependent ``if ...: raise`` check becomes ``torch._assert_async`` (real compiles, explain)."""

from __future__ import annotations

import inspect

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, choose, propose, propose_branch, propose_check, verify
from tests.rewrites._paste import graphs_in_fresh_process

GB0170 = BreakSite(gb_id="GB0170", message="Data-dependent branching")


def box_area_gap(boxes1, boxes2):
    """A cell of our own shaped like a detection loss's box helper: two checks that raise, then math."""
    if not (boxes1[:, 2:] >= boxes1[:, :2]).all():
        raise ValueError(f"boxes1 must be in [x0, y0, x1, y1] (corner) format, but got {boxes1}")
    if not (boxes2[:, 2:] >= boxes2[:, :2]).all():
        raise ValueError("boxes2 must be in corner format")
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    return area1[:, None] - area2[None, :]


def ctc_like(logits, labels=None, vocab_size=5):
    """A loss-style check behind an ``is not None`` guard (SEW's and UniSpeech's CTC head)."""
    if labels is not None and labels.max() >= vocab_size:
        raise ValueError(f"Label values must be <= vocab_size: {vocab_size}")
    out = logits.log_softmax(-1)
    if labels is not None:
        out = out + labels.float().mean()
    return out


def _boxes(n, seed):
    g = torch.Generator().manual_seed(seed)
    lo = torch.rand(n, 2, generator=g)
    return torch.cat([lo, lo + torch.rand(n, 2, generator=g)], dim=1)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


SETS = [(_boxes(3, 0), _boxes(4, 1)), (_boxes(5, 2), _boxes(2, 3))]


def test_both_checks_become_assert_async_and_the_graphs_go_from_three_to_one():
    brk = BreakSite("GB0170", _line_of(box_area_gap, "boxes2[:, 2:]"), "Data-dependent branching")
    p = propose_check(box_area_gap, brk)
    assert [r.remedy for r in p.rewrites] == ["check-assert"]
    src = p.rewrites[0].source
    assert "torch._assert_async((boxes1[:, 2:] >= boxes1[:, :2]).all(), 'ValueError: boxes1 must be in [x0, y0, x1, y1]" \
        " (corner) format, but got ...')" in src
    assert "torch._assert_async((boxes2[:, 2:] >= boxes2[:, :2]).all(), 'ValueError: boxes2 must be in corner format')" in src
    assert "raise ValueError" not in src
    v = verify(box_area_gap, p.rewrites[0], SETS)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 3, 1, [True, True]), v


def test_the_pasted_check_still_raises_on_bad_boxes_compiled():
    r = propose_check(box_area_gap, GB0170).rewrites[0]
    bad = torch.tensor([[1.0, 1.0, 0.0, 0.0]])
    with pytest.raises(ValueError):
        box_area_gap(bad, _boxes(2, 0))
    with r.applied():
        compiled = torch.compile(r.function, backend="aot_eager")
        with pytest.raises(RuntimeError, match="boxes1 must be in"):
            compiled(bad, _boxes(2, 0))
    torch._dynamo.reset()


def test_propose_tries_the_check_first_and_branches_leave_raises_alone():
    best, _ = choose(box_area_gap, propose(box_area_gap, GB0170).rewrites, SETS)
    assert best is not None and best.remedy == "check-assert"
    assert [r.remedy for r in propose_branch(box_area_gap, GB0170).rewrites] == []


def test_a_break_on_another_line_is_not_this_remedys():
    p = propose_check(box_area_gap, BreakSite("GB0170", _line_of(box_area_gap, "area1 ="), ""))
    assert p.rewrites == [] and not p.fits


def test_paste_in_a_fresh_process():
    r = propose_check(box_area_gap, GB0170).rewrites[0]
    call = "box_area_gap, (torch.rand(3, 2).repeat(1, 2) + torch.tensor([0., 0., 1., 1.]), torch.tensor([[0., 0., 1., 1.]]))"
    assert graphs_in_fresh_process([box_area_gap], "", call) == 3
    assert graphs_in_fresh_process([box_area_gap], r.source, call) == 1


def test_a_none_guard_stays_python_and_the_call_without_labels_still_runs():
    r = propose_check(ctc_like, GB0170).rewrites[0]
    assert ("    if labels is not None:\n        torch._assert_async(~(labels.max() >= vocab_size), "
            "'ValueError: Label values must be <= vocab_size: ...')\n") in r.source
    sets = [(torch.randn(2, 5), torch.tensor([1, 4])), (torch.randn(2, 5), torch.tensor([0, 2]))]
    v = verify(ctc_like, r, sets)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    with r.applied():
        torch._dynamo.reset()
        assert torch.equal(torch.compile(r.function, backend="aot_eager")(torch.zeros(2, 5)), ctc_like(torch.zeros(2, 5)))
    torch._dynamo.reset()
