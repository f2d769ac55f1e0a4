"""``loop-range``: a loop over ``torch.arange`` of Python numbers, read back with ``.item()``, iterates a range."""

from __future__ import annotations

import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_known_values, verify
from tests.rewrites._paste import graphs_in_fresh_process

GB0124 = BreakSite(gb_id="GB0124", message="Unsupported Tensor.item() call with capture_scalar_outputs=False")


def codebook_sum(ids, past=0):
    """Moshi's depth decoder in small: one embedding per codebook position, picked by the position's value."""
    idx = torch.arange(ids.shape[1]) + past
    total = ids[:, 0] * 0.0
    for i in idx:
        i = i.item()
        total = total + ids[:, i - past] * (i + 1)
    return total, idx


def float_steps(x):
    steps = torch.arange(3, dtype=torch.float32)
    for s in steps:
        x = x * s.item()
    return x


def rebound(x):
    steps = torch.arange(3)
    steps = steps * 2
    for s in steps:
        x = x + s.item()
    return x


def _sets():
    return [(torch.randint(0, 9, (2, 3)),), (torch.randint(0, 9, (2, 3)),)]


def test_the_loop_iterates_a_range_and_the_graph_is_whole():
    p = propose(codebook_sum, GB0124)
    assert [r.remedy for r in p.rewrites][:1] == ["loop-range"]
    r = p.rewrites[0]
    assert "for i in range(0 + past, ids.shape[1] + past):" in r.source and ".item()" not in r.source.split("\n", 1)[1]
    assert "idx = torch.arange(ids.shape[1]) + past" in r.source  # the tensor stays for its other uses
    v = verify(codebook_sum, r, _sets())
    assert v.kept and v.graphs_after == 1 and v.outputs_match == [True, True], v
    call = "codebook_sum, (torch.randint(0, 9, (2, 3)),)"
    assert graphs_in_fresh_process([codebook_sum], r.source, call) == 1


def test_values_python_does_not_know_are_left_alone():
    assert propose_known_values(float_steps, GB0124).rewrites == []  # a dtype may make them floats
    assert propose_known_values(rebound, GB0124).rewrites == []  # bound twice: not arange's values
