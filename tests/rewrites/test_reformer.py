"""The numpy -> math rewrite on a real model: Reformer (transformers, a dev requirement; tiny config, random weights)."""

from __future__ import annotations

import inspect

import torch

from nstviz.advisor.rewrites import BreakSite, choose, graph_count, propose


def test_reformer_chunk_length_helper():
    from transformers.models.reformer import modeling_reformer as R

    from tests.models.corpus import _reformer

    torch.manual_seed(0)
    model, kw = _reformer()
    ids = kw["input_ids"]
    sets = [(ids,), (torch.randint(0, 100, ids.shape, generator=torch.Generator().manual_seed(1)),)]

    def entry(input_ids):
        return model(input_ids=input_ids).last_hidden_state

    lines, first = inspect.getsourcelines(R.ReformerModel.forward)
    line = first + next(i for i, s in enumerate(lines) if "input_shape[-1] % least_common_mult_chunk_length != 0" in s)
    with torch.no_grad():
        assert graph_count(entry, sets[0]) == 2  # measured on torch 2.13 and 2.14.1
        p = propose(R.ReformerModel.forward, BreakSite(None, line, "generic_jump NumpyNdarrayVariable()"))
        best, verdicts = choose(R.ReformerModel.forward, p.rewrites, sets, entry=entry)
    assert best is not None and best.original is R._get_least_common_mult_chunk_len
    assert [(v.graphs_before, v.graphs_after, v.outputs_match) for v in verdicts] == [(2, 1, [True, True])]
    assert "math.lcm(config.lsh_attn_chunk_length, config.local_attn_chunk_length)" in best.source
    assert "np" in R._get_least_common_mult_chunk_len.__code__.co_names
