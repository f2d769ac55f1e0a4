"""Remedy 2 on real toys: ``.item()`` used as a size gets ``torch._check(n >= 0)`` with capture_scalar_outputs."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, graph_count, propose, propose_scalar, verify
from nstviz.advisor.rewrites.scalars import size_check_name
from tests.rewrites import toys

GB0124 = BreakSite(gb_id="GB0124", message="Unsupported Tensor.item() call with capture_scalar_outputs=False")


def _sets():
    return [(torch.randn(8, 3), torch.tensor([2, 5])), (torch.randn(8, 3), torch.tensor([7, 1]))]


def test_check_exists_on_this_torch():
    assert size_check_name() == "torch._check"
    assert hasattr(torch, "_check_is_size")  # present, but warns that it will be removed


def test_config_alone_does_not_lower_the_graph_count():
    sets = _sets()
    assert graph_count(toys.take_prefix, sets[0]) == 2
    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        assert graph_count(toys.take_prefix, sets[0]) == 2  # the `if n < 0` guard breaks instead


def test_size_check_lowers_graphs_and_matches_eager():
    p = propose(toys.take_prefix, GB0124)
    assert [r.remedy for r in p.rewrites] == ["item-check"]
    r = p.rewrites[0]
    assert r.config == {"capture_scalar_outputs": True}
    assert "    n = k.max().item()\n    torch._check(n >= 0)\n" in r.source
    v = verify(toys.take_prefix, r, _sets())
    assert (v.kept, v.graphs_before, v.graphs_after, v.outputs_match) == (True, 2, 1, [True, True]), v
    assert torch._dynamo.config.capture_scalar_outputs is False
    assert toys.take_prefix.__code__.co_name == "take_prefix" and "_check" not in toys.take_prefix.__code__.co_names


def test_paste_ready_source_in_a_fresh_namespace():
    r = propose_scalar(toys.take_prefix, GB0124).rewrites[0]
    ns: dict = {}
    exec(compile(r.source, "<pasted>", "exec"), {"torch": torch, "__builtins__": __builtins__}, ns)
    try:
        assert torch._dynamo.config.capture_scalar_outputs is True  # the pasted line sets it
        assert graph_count(ns["take_prefix"], _sets()[0]) == 1
    finally:
        torch._dynamo.config.capture_scalar_outputs = False


def test_restored_when_the_body_raises():
    r = propose_scalar(toys.take_prefix, GB0124).rewrites[0]
    with pytest.raises(KeyError), r.applied():
        assert torch._dynamo.config.capture_scalar_outputs is True
        raise KeyError("x")
    assert torch._dynamo.config.capture_scalar_outputs is False
    assert "_check" not in toys.take_prefix.__code__.co_names


def test_scalar_not_used_as_a_size_gets_no_check():
    p = propose_scalar(toys.scale_by_mean, GB0124)
    assert p.rewrites == [] and "not used as a size" in p.notes[0]
