"""Remedy: an early return on a data-dependent size becomes ``torch.cond`` (``size-cond``; real compiles)."""

from __future__ import annotations

import inspect

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, graph_count, propose, propose_size_branch, verify
from tests.rewrites._paste import graphs_in_fresh_process

GUARD = BreakSite(gb_id="GB0170", message="Could not guard on data-dependent expression u0 <= 4")


def top_k_points(points, scores, k: int):
    """SuperPoint's ``top_k_keypoints`` in small: keep all when there are at most ``k``."""
    if k >= len(points):
        return points, scores
    scores, indices = torch.topk(scores, k, dim=0)
    return points[indices], scores


def detect(heat, points):
    """A keypoint detector in small: a threshold mask (an unbacked size), then the top k."""
    keep = heat > 0.5
    points, scores = top_k_points(points[keep], heat[keep], 4)
    return points * 2, scores


def prints_first(points, scores, k: int):
    if k >= len(points):
        print("few points")
        return points, scores
    return points[:k], scores[:k]


def _sets():
    g = torch.Generator().manual_seed(0)
    many = (torch.rand(20, generator=g), torch.randint(0, 32, (20, 2), generator=g))
    few = (torch.rand(6, generator=g) * 0.6, torch.randint(0, 32, (6, 2), generator=g))  # at most 4 above 0.5
    return [many, few]


def test_the_early_return_becomes_one_cond_per_output_and_the_graphs_go_from_two_to_one():
    line = inspect.getsourcelines(top_k_points)[1] + 2
    p = propose_size_branch(top_k_points, BreakSite("GB0170", line, GUARD.message))
    assert [r.remedy for r in p.rewrites] == ["size-cond"]
    r = p.rewrites[0]
    assert r.config == {"capture_dynamic_output_shape_ops": True}
    assert "torch.topk(scores, torch.sym_min(k, scores.shape[0]), dim=0)" in r.source
    assert "return (torch.cond(k >= len(points), _nstviz_small_0, _nstviz_large_0, ()), " \
           "torch.cond(k >= len(points), _nstviz_small_1, _nstviz_large_1, ()))" in r.source
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        assert graph_count(detect, _sets()[0]) == 3  # the flag alone: the guard on the size breaks
    v = verify(top_k_points, r, _sets(), entry=detect)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    assert torch._dynamo.config.capture_dynamic_output_shape_ops is False


def test_both_sides_are_right_compiled_with_a_gradient_through_the_scores():
    r = propose(top_k_points, GUARD).rewrites[0]
    assert r.remedy == "size-cond"
    for heat, points in _sets():
        w = heat.clone().requires_grad_()
        want = detect(w, points)
        with r.applied():
            torch._dynamo.reset()
            got = torch.compile(detect, backend="aot_eager")(w, points)
        assert all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
        got[1].sum().backward()
        assert w.grad is not None and w.grad.sum().item() == float(got[1].numel())


def test_a_branch_with_a_side_effect_is_refused_with_a_reason():
    p = propose_size_branch(prints_first, GUARD)
    assert p.rewrites == [] and any("side-effect free" in n for n in p.notes)


def test_paste_in_a_fresh_process():
    r = propose_size_branch(top_k_points, GUARD).rewrites[0]
    call = "detect, (torch.rand(20), torch.randint(0, 32, (20, 2)))"
    flag = "torch._dynamo.config.capture_dynamic_output_shape_ops = True\n"
    assert graphs_in_fresh_process([top_k_points, detect], "", call, setup=flag) == 3
    assert graphs_in_fresh_process([top_k_points, detect], r.source, call) == 1


@pytest.mark.slow
def test_superpoint_keypoints_compile_whole():
    """transformers' SuperPoint (tiny config, eval): size-cond on ``top_k_keypoints`` with the flag gives one graph."""
    from transformers.models.superpoint import modeling_superpoint

    from tests.models import corpus27

    torch.manual_seed(0)
    model, inputs = corpus27.BREAKING["superpoint_eval"].build()
    fn = modeling_superpoint.top_k_keypoints
    r = propose_size_branch(fn, BreakSite("GB0170", inspect.getsourcelines(fn)[1] + 2, GUARD.message)).rewrites[0]
    want = model(**inputs)
    with r.applied():
        assert graph_count(lambda pixel_values: model(pixel_values=pixel_values), (inputs["pixel_values"],)) == 1
        torch._dynamo.reset()
        got = torch.compile(model, backend="aot_eager")(**inputs)
    assert torch.equal(got.keypoints, want.keypoints) and torch.allclose(got.scores, want.scores)
    assert modeling_superpoint.top_k_keypoints is fn
