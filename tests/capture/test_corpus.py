"""Capture corpus: exact breaks (GB id, line, count), graph counts and inlined-node sets.

Each case runs baseline and nonstrict through :func:`nstviz.compare` with the record backend;
the programs live in ``cases/corpus.py`` so line numbers are stable.
"""

from __future__ import annotations

import pytest
import torch

import nstviz
from tests.capture.cases import corpus as c
from tests.helpers import digest

BREAK_AT = ("GB0007", "corpus.py", 11, "opaque_scale")


@pytest.fixture
def x() -> torch.Tensor:
    return torch.rand(3, 4, generator=torch.Generator().manual_seed(0))


def _helper_case(fn, args, spec, *, graphs, count, stack_tail, region_nodes, level="aten_inference"):
    report = nstviz.compare(fn, *args, nonstrict=[spec])
    digest.check_consistent(report)
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert digest.breaks(base) == [(*BREAK_AT, count, False)]
    assert [loc.line for loc in base.breaks[0].stack][-len(stack_tail) :] == list(stack_tail)
    assert digest.dynamo_graphs(base) == graphs
    assert nst.breaks == () and digest.dynamo_graphs(nst) == 1 and report.counts["nonstrict"].full_graph
    assert [r.nodes for r in nst.regions] == [{f"0/0:{level}": tuple(names)} for names in region_nodes]
    assert [m.applied for m in nst.marked] == [True]
    assert len(report.diff.resolved) == 1 and report.diff.remaining == () and report.diff.introduced == ()
    assert report.outputs.match is True
    return report


def test_dict_argument(x):
    _helper_case(c.dict_fn, (x,), "dict_helper", graphs=3, count=2, stack_tail=(21, 16, 11), region_nodes=[("mul", "sin")])


def test_list_argument(x):
    _helper_case(c.list_fn, (x,), "list_helper", graphs=3, count=2, stack_tail=(31, 26, 11), region_nodes=[("mul", "mul_1")])


def test_nested_structures(x):
    _helper_case(c.nested_fn, (x,), "nested_helper", graphs=3, count=2, stack_tail=(41, 36, 11), region_nodes=[("mul_1", "exp")])


def test_custom_pytree_class(x):
    _helper_case(c.pair_fn, (x,), "pair_helper", graphs=2, count=1, stack_tail=(65, 60, 11), region_nodes=[("mul", "add")])


def test_dataclass_return(x):
    _helper_case(c.stats_fn, (x,), c.stats_helper, graphs=2, count=2, stack_tail=(83, 78, 11), region_nodes=[("mean", "mul", "std")])


def test_module_argument(x):
    torch.manual_seed(0)
    report = _helper_case(
        c.WithHelper(), (x,), "module_helper", graphs=2, count=2, stack_tail=(99, 89, 11),
        region_nodes=[("t", "addmm", "mul")], level="aten_forward",
    )
    call = next(n for g in report.runs["nonstrict"].graphs for n in g.nodes if n.nonstrict_call)
    assert call.target == "nonstrict_trace"


def test_method_of_module_every_block(x):
    torch.manual_seed(0)
    report = _helper_case(
        c.Stack(), (x,), "Block.stats", graphs=6, count=4, stack_tail=(112, 108, 11),
        region_nodes=[("mean", "mul"), ("mean_1", "mul_1"), ("mean_2", "mul_2")], level="aten_forward",
    )
    nst = report.runs["nonstrict"]
    assert {r.function for r in nst.regions} == {"Block.stats"}
    assert [(r.line_start, r.line_end) for r in nst.regions] == [(107, 109)] * 3
    assert {r.call_site.line for r in nst.regions} == {112}
    # ATen nodes of the nonstrict run know the module they came from
    mean = next(n for n in nst.graphs[1].nodes if n.name == "addmm")
    assert mean.module_type == "Linear"


def test_dotted_attribute_path_resolves_method(x):
    torch.manual_seed(0)
    model = c.Stack()
    report = nstviz.trace_code("y = compiled(x)", {"compiled": torch.compile(model), "model": model, "x": x},
                               nonstrict=["model.blocks.0.stats"])
    nst = report.runs["nonstrict"]
    assert len(nst.regions) == 3 and nst.breaks == ()


def test_helper_in_loop_and_several_call_sites(x):
    report = _helper_case(
        c.loop_fn, (x,), "loop_helper", graphs=1, count=3, stack_tail=(133, 128, 11),
        region_nodes=[(f"mul{s}",) for s in ("", "_1", "_2", "_3", "_4", "_5")],
    )
    assert [r.call_site.line for r in report.runs["nonstrict"].regions] == [133, 135, 135, 135, 135, 136]
    assert report.counts["nonstrict"].regions == 6


def test_global_tensor_read_is_inlined_and_named():
    report = _helper_case(
        c.global_fn, (torch.rand(3),), "global_helper", graphs=2, count=2, stack_tail=(149, 144, 11),
        region_nodes=[("mul", "_tensor_constant0", "add")],
    )
    (region,) = report.runs["nonstrict"].regions
    assert "OFFSET" in {r.name for r in region.reads}
    assert any(n.startswith("global_helper reads OFFSET (global)") for n in report.notes)


def test_item_data_dependent_not_helped(x):
    report = nstviz.compare(c.item_fn, x, nonstrict=["item_helper"])
    digest.check_consistent(report)
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert digest.breaks(base) == [("GB0124", "corpus.py", 154, "item_helper", 2, False)]
    assert digest.breaks(nst) == [
        ("GB0251", "corpus.py", 159, "item_fn", 1, False),
        ("GB0124", "corpus.py", 154, "item_helper", 1, False),
    ]
    assert nst.breaks[0].root_cause.startswith("DataDependentOutputException: aten._local_scalar_dense")
    assert [b.gb_id for b in report.diff.remaining] == ["GB0124"]
    assert [b.gb_id for b in report.diff.introduced] == ["GB0251"]
    (mark,) = nst.marked
    assert not mark.applied and "could not trace it" in mark.warning and "GB0251" in mark.warning
    assert nst.regions == ()


def test_non_pytree_return_gb0251(x):
    report = nstviz.compare(c.opaque_fn, x, nonstrict=["opaque_helper"])
    nst = report.runs["nonstrict"]
    assert digest.breaks(nst)[0] == ("GB0251", "corpus.py", 174, "opaque_fn", 1, False)
    assert nst.breaks[0].link.endswith("gb0251.html") and nst.breaks[0].explanation
    assert [b.gb_id for b in report.diff.introduced] == ["GB0251"]
    assert report.outputs.match is True


def test_training_step_forward_and_backward_graphs():
    import copy

    torch.manual_seed(0)
    model = c.Trainer()
    data = torch.rand(5, 4)
    reference = copy.deepcopy(model)
    c.train_step(reference, data)
    report = nstviz.compare(c.train_step, model, data, nonstrict=["loop_helper"])
    digest.check_consistent(report)
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert digest.breaks(base) == [(*BREAK_AT, 3, False), ("GB0123", "corpus.py", 190, "train_step", 1, False)]
    assert digest.breaks(nst) == [("GB0123", "corpus.py", 190, "train_step", 1, False)]
    assert [g.level for g in nst.graphs] == ["dynamo", "aten_forward", "aten_backward"]
    (region,) = nst.regions
    assert region.nodes == {"0/0_1:aten_forward": ("mul",), "0/0_1:aten_backward": ("mul_3",)}
    # rolled back between runs: the gradient is that of one step, not accumulated over the runs
    assert torch.allclose(model.lin.weight.grad, reference.lin.weight.grad)


def test_dynamic_shapes_recompile():
    src = (
        "import torch\n"
        "from tests.capture.cases.corpus import dyn_fn\n"
        "f = torch.compile(dyn_fn)\n"
        "a = f(torch.rand(3, 2))\n"
        "b = f(torch.rand(5, 2))\n"
    )
    ns: dict = {}
    report = nstviz.trace_code(src, ns, nonstrict=["tests.capture.cases.corpus.loop_helper"])
    digest.check_consistent(report)
    nst = report.runs["nonstrict"]
    assert [(cp.frame_id, cp.compile_id) for cp in nst.compiles] == [(0, 0), (0, 1)]
    assert nst.compiles[0].recompile_reason is None
    assert "size mismatch at index 0. expected 3, actual 5" in nst.compiles[1].recompile_reason
    assert all(cp.guards for cp in nst.compiles)
    assert [g.id for g in nst.graphs if g.level == "dynamo"] == ["0/0:dynamo", "0/1:dynamo"]
    base = report.runs["baseline"]
    assert digest.breaks(base) == [(*BREAK_AT, 3, False)]
    assert base.breaks[0].graph_after == "2/0:dynamo"
    assert ns["b"].shape == (2,)
    assert "  2 compiles, 1 recompile (first: 0/1 0/0: tensor 'x' size mismatch" in report.summary()


def test_compiled_object_defined_earlier_is_captured(x):
    compiled = torch.compile(c.loop_fn, fullgraph=True)
    ns = {"compiled": compiled, "x": x}
    report = nstviz.trace_code("y = compiled(x)", ns, nonstrict=[c.loop_helper])
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.fatal, b.location.line) for b in base.breaks] == [("GB0007", True, 11)]
    assert base.error.startswith("Unsupported") and "y" not in report.outputs.details
    assert nst.error is None and len(nst.regions) == 6 and torch.is_tensor(ns["y"])
    assert report.user_exception is None


def test_forward_mark_is_reported_not_applied(x):
    torch.manual_seed(0)
    model = c.WithHelper()
    report = nstviz.compare(model, x, nonstrict=["WithHelper.forward"])
    (mark,) = report.runs["nonstrict"].marked
    assert not mark.applied and "forward" in mark.warning
    assert any("forward" in n for n in report.notes)


def test_baseline_module_counts_match_dynamo_explain(x):
    report = nstviz.compare(c.dict_fn, x)
    torch._dynamo.reset()
    explained = torch._dynamo.explain(c.dict_fn)(x)
    torch._dynamo.reset()
    assert report.counts["baseline"].graphs == explained.graph_count


def test_fullgraph_nonstrict_failure_is_a_finding():
    report = nstviz.compare(c.item_full, torch.rand(3), nonstrict=["item_helper"])
    digest.check_consistent(report)
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert base.error is None and digest.dynamo_graphs(base) == 1
    assert nst.error_type == "InternalTorchDynamoError" and nst.graphs == ()
    assert "item_full" in nst.error_traceback
    # the output verdict left is eager vs baseline (the nonstrict run has no outputs)
    assert report.summary().splitlines()[0] == (
        "0 breaks → 0, 1 graph → 0, nonstrict raised InternalTorchDynamoError, outputs match eager"
    )
    assert report.user_exception is not None
