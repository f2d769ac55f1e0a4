"""Remedies: attention per segment becomes one masked call (``segment-mask``); a selection's size a count (``mask-count``)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_mask_count, propose_segment_mask, verify
from nstviz.capture.grad_check import trains
from tests.rewrites import toys_segments as toys
from tests.rewrites._paste import graphs_in_fresh_process

TOLIST = "Data dependent operator: aten._local_scalar_dense.default"
SELECTION = "Dynamic shape operator: aten.nonzero.default"


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, t in enumerate(lines) if text in t)


def _packed_sets():
    """Two input sets: the same 10 positions cut into 2 images at different places."""
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(10, 8, generator=g), torch.tensor(cu)) for cu in ([0, 3, 10], [0, 6, 10])]


def _segments(model: torch.nn.Module):
    return propose(type(model).forward, BreakSite("GB0033", _line(type(model).forward, ".tolist()"), TOLIST))


def test_sdpa_per_segment_becomes_one_masked_call_equal_in_outputs_and_gradients():
    model = toys.PackedSdpa().train()
    p = _segments(model)
    assert [r.remedy for r in p.rewrites][:1] == ["segment-mask"], p.notes
    r = p.rewrites[0]
    assert r.config == {}  # no flag: the sizes are never read
    assert "attn_mask=segment_mask" in r.source and ".tolist()" not in r.source.split("def ", 1)[1]
    v = verify(type(model).forward, r, _packed_sets(), entry=model)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    assert trains(model)  # so verify compared the gradients too


def test_a_none_mask_keyword_is_replaced_and_the_segments_never_mix():
    model = toys.PackedEager().eval()
    r = _segments(model).rewrites[0]
    assert "attention_mask=segment_mask, scale=0.5" in r.source
    x, cu = _packed_sets()[0]
    with torch.no_grad():
        before = model(x, cu)
        with r.applied():
            after = model(x, cu)
            x2 = x.clone()
            x2[3:] += 1  # the second image changed: the first image's rows must not move
            first = model(x2, cu)[:3]
    torch.testing.assert_close(after, before)
    torch.testing.assert_close(first, before[:3])
    assert type(model).forward is toys.PackedEager.forward  # restored after


def test_no_rewrite_when_the_per_segment_outputs_are_read_again():
    model = toys.PackedWeightsKept()
    p = propose_segment_mask(type(model).forward, BreakSite("GB0033", _line(type(model).forward, ".tolist()"), TOLIST))
    assert p.rewrites == [] and not p.fits


def test_the_advisor_keeps_the_mask_and_the_pasted_code_compiles_whole():
    import nstviz

    model = toys.PackedSdpa().eval()
    report = nstviz.compare(model, *_packed_sets()[0], auto=True, backend="eager", time=False)
    kept = [c.function for c in report.candidates if c.status == "improved"]
    assert any("segment-mask" in k for k in kept), report.candidates
    rec = report.recommendation
    assert rec is not None and rec.graphs_after == 1
    call = "toys_segments.PackedSdpa().eval(), (torch.randn(10, 8), torch.tensor([0, 3, 10]))"
    assert graphs_in_fresh_process([toys.PackedSdpa], rec.code, call) == 1


def _merge_sets():
    g = torch.Generator().manual_seed(1)
    ids = [torch.tensor([[1, 7, 7, 2, 7, 3]]), torch.tensor([[7, 2, 2, 7, 3, 7]])]
    return [(torch.randn(1, 6, 4, generator=g), i, torch.randn(3, 4, generator=g)) for i in ids]


def test_the_size_of_a_mask_selection_becomes_a_count_and_its_check_an_assert():
    brk = BreakSite("GB0036", _line(toys.merge_features, ".numel()"), SELECTION)
    p = propose(toys.merge_features, brk)
    assert [r.remedy for r in p.rewrites][:1] == ["mask-count"], p.notes
    r = p.rewrites[0]
    assert "mask.sum() * (embeds.numel() // mask.numel())" in r.source
    assert "torch._assert_async" in r.source and "raise" not in r.source.split("def ", 1)[1]
    v = verify(toys.merge_features, r, _merge_sets())
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    e, _, f = _merge_sets()[0]
    with r.applied():  # the check still holds: four tokens for three features fail
        try:
            toys.merge_features(e, torch.tensor([[7, 7, 7, 2, 7, 3]]), f)
        except RuntimeError as err:
            assert "do not match" in str(err)
        else:
            raise AssertionError("the count check did not raise")


def test_no_count_without_a_selection_measured_at_the_break():
    p = propose_mask_count(toys.eager_attention, BreakSite("GB0036", None, SELECTION))
    assert p.rewrites == [] and not p.fits


def _depth_sets():
    g = torch.Generator().manual_seed(2)
    sets = []
    for p in (0.3, 0.6):
        target = torch.rand(2, 1, 6, 6, generator=g) + 0.1
        target[torch.rand(2, 1, 6, 6, generator=g) < p] = 0.0  # pixels without a depth
        sets.append((torch.rand(2, 1, 6, 6, generator=g).add(0.1).requires_grad_(), target))
    return sets


def test_a_loss_over_selected_pixels_becomes_masked_sums_with_the_same_gradients():
    loss = toys.LogDepthLoss().train()
    fwd = toys.LogDepthLoss.forward
    p = propose(fwd, BreakSite("GB0036", _line(fwd, "target[valid_mask]"), SELECTION))
    assert [r.remedy for r in p.rewrites][:1] == ["masked-reduce"], p.notes
    body = p.rewrites[0].source.split("def ", 1)[1]
    assert "[valid_mask]" not in body and "torch.where(keep, target, 1)" in body
    v = verify(fwd, p.rewrites[0], _depth_sets(), entry=loss)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 3, 1, [True, True]), v
    pred, target = _depth_sets()[1]
    want = torch.autograd.grad(loss(pred, target), pred)[0]
    with p.rewrites[0].applied():
        got = torch.autograd.grad(loss(pred, target), pred)[0]
    assert torch.isfinite(got).all()  # the pixels without a depth were computed on 1, then zeroed
    torch.testing.assert_close(got, want)


def test_a_row_mask_over_the_leading_dimension_keeps_its_sum():
    g = torch.Generator().manual_seed(3)
    sets = [(torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g), torch.tensor(rows))
            for rows in ([True, False, True, True, False], [False, True, False, False, True])]
    p = propose(toys.masked_rows_l1, BreakSite("GB0036", None, SELECTION))
    assert [r.remedy for r in p.rewrites][:1] == ["masked-reduce"], p.notes
    v = verify(toys.masked_rows_l1, p.rewrites[0], sets)
    assert (v.kept, v.graphs_after, v.outputs_match) == (True, 1, [True, True]), v


def test_no_masked_reduction_when_the_selection_itself_is_used():
    from nstviz.advisor.rewrites import propose_masked_reduce

    p = propose_masked_reduce(toys.selection_returned, BreakSite("GB0036", None, SELECTION))
    assert p.rewrites == [] and not p.fits


def test_a_check_helper_on_the_count_becomes_an_assert_with_the_message_fixed_text():
    fn = toys.merge_features_checked
    p = propose(fn, BreakSite("GB0036", _line(fn, ".numel()"), SELECTION))
    r = p.rewrites[0]
    assert r.remedy == "mask-count", p.notes
    assert "torch._assert_async(mask.sum() * (embeds.numel() // mask.numel()) == features.numel(), " \
           "'tokens: ..., features: ...')" in r.source
    v = verify(fn, r, _merge_sets())
    assert (v.kept, v.graphs_after, v.outputs_match) == (True, 1, [True, True]), v
