"""Remedy 1 on real toys: a data-dependent ``if`` becomes torch.where / torch.cond (torch.compile, explain)."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import (
    BreakSite,
    choose,
    graph_count,
    input_variants,
    propose,
    propose_branch,
    verify,
)
from tests.rewrites import toys
from tests.rewrites._paste import graphs_in_fresh_process

GB0170 = BreakSite(gb_id="GB0170", message="Data-dependent branching")


def _line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_input_sets_take_both_branches():
    sets = input_variants((torch.randn(4, 6, generator=torch.Generator().manual_seed(1)),))
    assert {bool((s[0] * 2).sum() > 0) for s in sets} == {True, False}


@pytest.mark.parametrize(("name", "before"), [("branch_assign", 2), ("branch_return", 2)])
def test_where_and_cond_lower_graphs(name, before):
    fn = getattr(toys, name)
    sets = input_variants((torch.randn(4, 6),))
    p = propose_branch(fn, BreakSite("GB0170", _line_of(fn, "if ")))
    assert [r.remedy for r in p.rewrites] == ["branch-where", "branch-cond"]
    for r in p.rewrites:
        v = verify(fn, r, sets)
        assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, before, 1, [True, True, True]), v
    assert getattr(toys, name) is fn


def test_if_without_else_and_boolop():
    fn = toys.branch_no_else
    w = torch.randn(6, 5)
    sets = [(torch.randn(4, 6), w), (torch.randn(4, 6) * 0.01, w), (-torch.randn(4, 6), w)]
    best, verdicts = choose(fn, propose(fn, GB0170).rewrites, sets)
    assert best is not None and best.remedy == "branch-where"
    assert [(v.graphs_before, v.graphs_after, v.kept) for v in verdicts] == [(3, 1, True), (3, 1, True)]
    assert "(h.max() > 1) & (h.min() < 0)" in best.source


def test_conditional_expression_becomes_where():
    sets = [(torch.randn(4, 6) * 3,), (torch.rand(4, 6) * 0.5,)]
    assert {bool(s[0].abs().max() > 1) for s in sets} == {True, False}
    p = propose_branch(toys.soft_clip, GB0170)
    assert [r.remedy for r in p.rewrites] == ["branch-where"]
    assert "    y = torch.where(s > 1, x / s, x)\n" in p.rewrites[0].source
    v = verify(toys.soft_clip, p.rewrites[0], sets)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v


def test_closure_kept_and_code_swapped_back():
    fn = toys.make_scaled_branch(torch.tensor(3.0))
    code, cells = fn.__code__, fn.__closure__
    p = propose_branch(fn, GB0170)
    v = verify(fn, p.rewrites[0], input_variants((torch.randn(4, 6),)), entry=fn)
    assert (v.kept, v.graphs_before, v.graphs_after) == (True, 2, 1), v
    assert fn.__code__ is code and fn.__closure__ is cells


def test_method_on_a_module_via_class_attribute():
    torch.manual_seed(0)
    model = toys.Gated().eval()
    original = toys.Gated.__dict__["gate"]
    sets = [(torch.randn(3, 6) * 3,), (torch.randn(3, 6) * 0.05,)]
    p = propose_branch(toys.Gated.gate, GB0170)
    with torch.no_grad():
        best, verdicts = choose(toys.Gated.gate, p.rewrites, sets, entry=model)
    assert best is not None
    assert [(v.graphs_before, v.graphs_after) for v in verdicts] == [(4, 1), (4, 1)]  # measured, torch 2.13
    assert toys.Gated.__dict__["gate"] is original


def test_shape_condition_needs_no_rewrite():
    p = propose_branch(toys.pad_to_multiple, GB0170)
    assert p.rewrites == []
    assert "depends on shapes only" in p.notes[0]
    assert graph_count(toys.pad_to_multiple, (torch.randn(2, 6),)) == 1


def test_side_effect_in_a_branch_is_not_rewritten():
    p = propose_branch(toys.branch_side_effect, GB0170)
    assert p.rewrites == [] and "not side-effect free" in p.notes[0]
    assert graph_count(toys.branch_side_effect, (torch.randn(2, 3), [])) == 2


def test_restored_when_the_body_raises():
    fn = toys.branch_assign
    code = fn.__code__
    r = propose_branch(fn, GB0170).rewrites[0]
    with pytest.raises(RuntimeError, match="boom"), r.applied():
        assert toys.branch_assign is not fn or fn.__code__ is not code
        raise RuntimeError("boom")
    assert toys.branch_assign is fn and fn.__code__ is code


def test_paste_ready_source_in_a_fresh_process():
    fn = toys.branch_assign
    r = propose_branch(fn, GB0170).rewrites[0]
    assert r.source.startswith("# nstviz: the data-dependent `if y.sum() > 0` broke the graph (GB0170)")
    call = "branch_assign, (torch.randn(4, 6),)"
    assert graphs_in_fresh_process([fn], "", call) == 2
    assert graphs_in_fresh_process([fn], r.source, call) == 1


def overflow_clamp(h, training=True):
    """Transformers' training-time overflow clamp (DETR, Mask2Former): a temporary bound only in the branch."""
    h = h * 2
    if training:
        if not torch.isfinite(h).all():
            clamp_value = torch.finfo(h.dtype).max - 1000
            h = torch.clamp(h, min=-clamp_value, max=clamp_value)
    return h + 1


def test_overflow_clamp_with_a_temporary_becomes_where_and_cond():
    big = torch.finfo(torch.float32).max
    sets = [(torch.randn(3, 4),), (torch.tensor([[big, 1.0], [-big, 2.0]]),)]
    assert {bool(torch.isfinite(s[0] * 2).all()) for s in sets} == {True, False}
    p = propose_branch(overflow_clamp, BreakSite("GB0170", _line_of(overflow_clamp, "isfinite")))
    assert [r.remedy for r in p.rewrites] == ["branch-where", "branch-cond"]
    # the temporary is not selected with torch.where: it is unbound when the branch is not taken
    assert "clamp_value = torch.where" not in p.rewrites[0].source
    for r in p.rewrites:
        v = verify(overflow_clamp, r, sets)
        assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v


def test_a_rewrite_is_checked_on_the_input_sets_the_code_itself_takes():
    # random token ids break the ids' structure, so the code as written raises on them (as Grounding DINO's
    # label map does on a prompt's random ids): that set says nothing of the rewrite; floats varied, ids kept do
    import nstviz

    ids = torch.tensor([[0, 0, 1, 1, 2, 3]])
    report = nstviz.compare(toys.branch_on_a_prompt, torch.randn(1, 6), ids, auto=True, backend="eager", time=False)
    kept = [c for c in report.candidates if c.status == "improved"]
    assert [c.function for c in kept] == ["rewrite: branch_on_a_prompt (branch-where)"], report.candidates
    assert "outputs equal eager on 2 more input sets of the same shapes" in kept[0].error
    assert report.recommendation is not None and report.recommendation.graphs_after == 1


def make_padding_mask(input_ids, padding_idx=1):
    """fairseq's (FSMT's) padding mask: None when nothing is padded."""
    padding_mask = input_ids.eq(padding_idx)
    if not padding_mask.any():
        padding_mask = None
    return padding_mask


def masked_scores(input_ids, scores):
    mask = make_padding_mask(input_ids)
    if mask is not None:  # an all-False mask changes nothing here
        scores = scores.masked_fill(mask, -1e9)
    return scores.softmax(-1)


def zeroed_by_mask(input_ids, scores):
    mask = make_padding_mask(input_ids)
    if mask is not None:  # here the trivial mask is not neutral: it zeroes everything
        scores = scores * mask
    return scores.softmax(-1)


def _padded_and_not():
    scores = torch.randn(2, 5)
    padded = torch.tensor([[5, 6, 7, 1, 1], [4, 5, 6, 7, 8]])
    whole = torch.tensor([[5, 6, 7, 8, 9], [4, 5, 6, 7, 8]])
    return [(padded, scores), (whole, scores)]


def test_a_shortcut_to_none_is_dropped_where_the_trivial_mask_does_nothing():
    sets = _padded_and_not()
    p = propose_branch(make_padding_mask, BreakSite("GB0170", _line_of(make_padding_mask, "if not")))
    assert [r.remedy for r in p.rewrites] == ["branch-keep"]  # torch.where / torch.cond cannot give None
    r = p.rewrites[0]
    assert "if not padding_mask.any()" not in r.source.split("\n", 1)[1] and "return padding_mask" in r.source
    v = verify(make_padding_mask, r, sets, entry=masked_scores)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    call = "masked_scores, (torch.tensor([[5, 6, 1]]), torch.randn(1, 3))"
    assert graphs_in_fresh_process([make_padding_mask, masked_scores], "", call) == 2
    assert graphs_in_fresh_process([make_padding_mask, masked_scores], r.source, call) == 1


def test_a_shortcut_to_none_is_not_kept_where_the_trivial_mask_changes_the_outputs():
    r = propose_branch(make_padding_mask, BreakSite("GB0170", _line_of(make_padding_mask, "if not"))).rewrites[0]
    v = verify(make_padding_mask, r, _padded_and_not(), entry=zeroed_by_mask)
    assert not v.kept and v.outputs_match == [True, False], v


def test_a_name_only_the_shortcut_binds_is_not_dropped():
    def only_in_branch(x):
        if x.sum() > 0:
            y = None
        else:
            y = x
        return y

    p = propose_branch(only_in_branch, BreakSite("GB0170", _line_of(only_in_branch, "if x.sum")))
    assert "branch-keep" not in [r.remedy for r in p.rewrites]


class GatedCrossAttention(torch.nn.Module):
    """Evolla's aligner in small: cross-attention and a feed-forward only when a modality is given and has a token."""

    def __init__(self):
        super().__init__()
        self.attend = torch.nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=True)
        self.ff = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1))
        self.gate = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, query, kv=None, kv_mask=None):
        hidden = query
        if (kv is not None and kv_mask.any()) or (kv is None and query.mean() > 10):
            residual = hidden
            hidden = self.attend(hidden, kv, kv, key_padding_mask=~kv_mask)[0] * torch.tanh(self.gate)
            hidden = residual + hidden
            hidden = hidden + self.ff(hidden)
        return hidden


def _gated_sets():
    kv = torch.randn(2, 5, 8)
    return [(torch.randn(2, 3, 8), kv, torch.tensor([[True] * 5, [True, True, False, False, False]])),
            (torch.randn(2, 3, 8), kv, torch.zeros(2, 5, dtype=torch.bool))]


def test_a_guard_around_submodule_calls_becomes_torch_cond_in_eval_mode_only():
    torch.manual_seed(0)
    model = GatedCrossAttention().eval()
    fn = GatedCrossAttention.forward
    p = propose_branch(fn, BreakSite("GB0170", _line_of(fn, "kv_mask.any()) or")))
    assert [r.remedy for r in p.rewrites] == ["branch-cond"]  # torch.where would run the submodules always
    r = p.rewrites[0]
    # `kv is not None` keeps Python's short circuit: kv_mask is never read where kv is None
    assert "(kv_mask.any() if kv is not None else torch.tensor(False))" in r.source
    assert "if self.training or not torch.compiler.is_compiling():" in r.source
    with torch.no_grad():
        v = verify(fn, r, _gated_sets(), entry=model)
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    model.train()  # in training the code runs as written: torch.cond's backward would redraw the dropout masks
    v = verify(fn, r, _gated_sets(), entry=model)
    assert not v.kept and v.graphs_after == v.graphs_before == 2, v
    model.eval()
    args = _gated_sets()[0]
    with torch.no_grad():
        written = model(*args)
    counters = torch._dynamo.utils.counters
    frames = counters["stats"]["calls_captured"]
    with r.applied(), torch.no_grad():  # run eagerly, the code as written runs: no torch.cond, no compile
        assert torch.equal(model(*args), written)
    assert counters["stats"]["calls_captured"] == frames
    assert GatedCrossAttention.forward is fn


def test_a_submodule_call_outside_self_or_a_guard_on_none_only_is_not_rewritten():
    def other_module(m, x):
        if x.sum() > 0:
            x = m(x)
        return x

    assert propose_branch(other_module, BreakSite("GB0170", _line_of(other_module, "if x.sum"))).rewrites == []

    def none_only(x, y=None):
        if y is not None:
            x = x + y
        return x

    assert propose_branch(none_only, BreakSite("GB0170", _line_of(none_only, "if y is"))).rewrites == []


def test_a_branch_that_draws_random_numbers_gets_no_torch_cond():
    def noisy(h, p: float = 0.1):
        if h.sum() > 0:
            h = torch.nn.functional.dropout(h, p) * 2
        return h

    p = propose_branch(noisy, BreakSite("GB0170", _line_of(noisy, "if h.sum")))
    assert [r.remedy for r in p.rewrites] == ["branch-where"]  # its draws show in the outputs; cond's only in grads
    assert any("draws random numbers" in n for n in p.notes)
