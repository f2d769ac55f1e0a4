"""The eager experts loop (nonzero per expert, GB0036) switched to transformers' batched experts: toy and real MoEs."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, choose, graph_count, input_variants, propose
from nstviz.advisor.rewrites.routers import ExpertsSwitch, propose_experts_implementation
from tests.rewrites import toys_buffers, toys_routers
from tests.rewrites._paste import graphs_in_fresh_process

GB0036 = BreakSite("GB0036", None, "Dynamic shape operator")


def test_toy_experts_switch():
    model = toys_routers.ToyMoE().eval()
    cls = toys_routers.ToyExperts
    wrapper = cls.__dict__["forward"]
    sets = input_variants((torch.randn(10, 6),))
    p = propose(wrapper.__wrapped__, GB0036)
    rw = [r for r in p.rewrites if isinstance(r, ExpertsSwitch)]
    assert [r.implementation for r in rw] == ["grouped_mm", "batched_mm"]
    assert rw[0].source.endswith("model.set_experts_implementation('grouped_mm')\n")
    with torch.no_grad():
        assert graph_count(model, sets[0]) == 2  # the loop's frame is skipped after the nonzero break
        best, verdicts = choose(wrapper, rw, sets, entry=model)
    assert [(v.kept, v.graphs_before, v.graphs_after, v.outputs_match) for v in verdicts] == [
        (True, 2, 1, [True, True, True])] * 2
    assert best is rw[0] and cls.__dict__["forward"] is wrapper


def test_restored_when_the_block_raises():
    cls = toys_routers.ToyExperts
    wrapper = cls.__dict__["forward"]
    r = propose_experts_implementation(wrapper, GB0036).rewrites[0]
    with pytest.raises(RuntimeError, match="boom"), r.applied():
        assert cls.__dict__["forward"] is not wrapper
        raise RuntimeError("boom")
    assert cls.__dict__["forward"] is wrapper


def test_not_an_experts_module():
    p = propose_experts_implementation(toys_buffers.PadConv.forward, GB0036)
    assert p.rewrites == [] and "no use_experts_implementation dispatch" in p.notes[0]
    p = propose_experts_implementation(toys_routers.ToyMoE.forward, GB0036)
    assert p.rewrites == [] and "no use_experts_implementation dispatch" in p.notes[0]


@pytest.mark.parametrize(("build", "cls_name", "before"), [
    ("mixtral", "transformers.models.mixtral.modeling_mixtral.MixtralExperts", 9),
    ("qwen2_moe", "transformers.models.qwen2_moe.modeling_qwen2_moe.Qwen2MoeExperts", 10),
])
def test_real_moe_models(build, cls_name, before):
    """Tiny configs, eager experts, eval, no_grad: explain's graph counts, the same on torch 2.13 and 2.14.1."""
    import importlib

    mod, _, name = cls_name.rpartition(".")
    cls = getattr(importlib.import_module(mod), name)
    model = getattr(toys_routers, build)()
    ids = torch.randint(0, 100, (1, 8), generator=torch.Generator().manual_seed(0))
    sets = [(ids,), (torch.randint(0, 100, (1, 8), generator=torch.Generator().manual_seed(1)),)]

    def entry(input_ids):
        return model(input_ids=input_ids).last_hidden_state

    wrapper = cls.__dict__["forward"]
    with torch.no_grad():
        p = propose(wrapper.__wrapped__, GB0036)
        rw = [r for r in p.rewrites if isinstance(r, ExpertsSwitch)]
        best, verdicts = choose(wrapper.__wrapped__, rw, sets, entry=entry)
    assert [(v.kept, v.graphs_before, v.graphs_after, v.outputs_match) for v in verdicts] == [
        (True, before, 1, [True, True])] * 2
    assert best is rw[0] and cls.__dict__["forward"] is wrapper
    assert model.config._experts_implementation == "eager"
    # pasted in a fresh process after the model is built: explain before -> 1 graph
    setup = f"from tests.rewrites.toys_routers import {build}\nmodel = {build}()\n"
    call = "model, (torch.randint(0, 100, (1, 8)),)"
    assert graphs_in_fresh_process([], "", call, setup) == before
    assert graphs_in_fresh_process([], best.source, call, setup) == 1


def test_the_pasted_code_of_the_switch_is_its_own_line_not_a_code_swap():
    from nstviz.advisor.code import rewrite_lines

    wrapper = toys_routers.ToyExperts.__dict__["forward"]
    r = propose_experts_implementation(wrapper, GB0036).rewrites[0]
    imports: dict[str, None] = {}
    lines = rewrite_lines(r, imports)
    assert "model.set_experts_implementation('grouped_mm')" in lines
    assert not any("__code__" in line for line in lines), lines  # the switch defines no function to swap in
