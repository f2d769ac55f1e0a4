"""Experts without a batched switch (one module each): the eager loop run over every expert with the router's mask."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, choose, graph_count, input_variants, propose
from nstviz.advisor.rewrites.dense_experts import propose_dense_experts
from tests.rewrites import toys, toys_dense
from tests.rewrites._paste import graphs_in_fresh_process

GB0036 = BreakSite("GB0036", None, "Dynamic shape operator")


@pytest.mark.parametrize("top_k", [1, 2])
def test_every_expert_masked_gives_one_graph_and_eagers_outputs(top_k):
    model, (x,) = toys_dense.build(top_k)
    fwd = toys_dense.ToyModuleExperts.forward
    code_before = fwd.__code__
    p = propose(fwd, GB0036)
    dense = [r for r in p.rewrites if r.remedy == "experts-dense"]
    assert len(dense) == 1
    assert "for expert_idx in [[_nstviz_e] for _nstviz_e in range(len(expert_mask))]:" in dense[0].source
    assert "nonzero" not in dense[0].source.split("\n", 1)[1]  # the hits are not computed at all
    sets = input_variants((x,))
    with torch.no_grad():
        assert graph_count(model, sets[0]) > 1
        best, verdicts = choose(fwd, dense, sets, entry=model)
    assert best is dense[0], verdicts
    assert (verdicts[0].graphs_after, verdicts[0].outputs_match) == (1, [True] * len(sets))
    assert fwd.__code__ is code_before  # applied live, put back


def test_the_paste_gives_one_graph_in_a_fresh_process():
    fwd = toys_dense.ToyModuleExperts.forward
    r = propose_dense_experts(fwd, GB0036).rewrites[0]
    paste = (r.source + "\nfrom tests.rewrites import toys_dense\n"
             "toys_dense.ToyModuleExperts.forward.__code__ = forward.__code__\n")
    assert graphs_in_fresh_process([], paste, "(lambda m, a: (m, a))(*toys_dense.build())",
                                   setup="torch.set_grad_enabled(False)") == 1
    assert graphs_in_fresh_process([], "from tests.rewrites import toys_dense\n",
                                   "(lambda m, a: (m, a))(*toys_dense.build())",
                                   setup="torch.set_grad_enabled(False)") > 1


def test_a_loop_of_another_form_is_not_rewritten():
    p = propose_dense_experts(toys.quantized_error, GB0036)
    assert p.rewrites == [] and not p.fits and "not rewritten" in p.notes[0]
    p = propose_dense_experts(torch.sin, GB0036)
    assert p.rewrites == [] and "is not a Python function" in p.notes[0]
