"""Merged mode's attribution and placeholder names, on small hand-made runs (no torch)."""

from __future__ import annotations

from nstviz.passes.params import name_placeholders, param_name
from nstviz.passes.provenance import assign_baseline_graphs
from nstviz.report.model import Graph, Location, Node, Region, Run

F = "/u/model.py"
STACKS = [
    (Location(file=F, line=36, function="forward"),),  # 0: Block.forward's line (baseline)
    (Location(file=F, line=25, function="rms_scale"),),  # 1: rms_scale's own line (baseline)
    (
        Location(file=F, line=48, function="forward"),
        Location(file=F, line=36, function="forward"),
    ),  # 2: call site
    (  # 3: nonstrict op with its own line
        Location(file=F, line=48, function="forward"),
        Location(file=F, line=36, function="forward"),
        Location(file=F, line=25, function="rms_scale"),
    ),
]


def _op(name: str, target: str, stack: int, **kw) -> Node:
    return Node(name=name, op="call_function", target=target, stack=stack, **kw)


def _pair(prefix: str, ops: list[Node]) -> tuple[Graph, Graph]:
    frame, compile_id = prefix.split("/")
    fid, cid = int(frame), int(compile_id.split("_")[0])
    dyn = Graph(
        id=f"{prefix}:dynamo", level="dynamo", frame_id=fid, compile_id=cid, nodes=(), op_count=len(ops)
    )
    aten = Graph(
        id=f"{prefix}:aten_forward", level="aten_forward", frame_id=fid, compile_id=cid, nodes=tuple(ops)
    )
    return dyn, aten


def _baseline(graph_runs: tuple[str, ...]) -> Run:
    graphs = [
        *_pair("1/0", [_op("addmm", "aten.addmm.default", 0)]),
        *_pair("3/0", [_op("pow_1", "aten.pow.Tensor_Scalar", 1)]),
        *_pair("4/0", [_op("relu", "aten.relu.default", 0)]),
        *_pair("1/1", [_op("addmm", "aten.addmm.default", 0)]),
        *_pair("4/1", [_op("relu", "aten.relu.default", 0)]),
    ]
    return Run(name="baseline", graphs=tuple(graphs), graph_runs=graph_runs)


RAN = tuple(f"{g}:dynamo" for g in ("1/0", "3/0", "4/0", "1/1", "3/0", "4/1", "1/1", "3/0", "4/1"))


def _nonstrict(own_line: bool) -> Run:
    nodes = []
    regions = []
    for b in range(3):
        nodes.append(_op(f"addmm_{b}", "aten.addmm.default", 2, module=f"blocks.{b}.proj"))
        nodes.append(_op(f"pow_{b}", "aten.pow.Tensor_Scalar", 3 if own_line else 2, region=f"r{b}"))
        nodes.append(_op(f"relu_{b}", "aten.relu.default", 2, module=f"blocks.{b}"))
        regions.append(
            Region(
                id=f"r{b}", function="rms_scale", file=F, line_start=22, line_end=25, call_site=STACKS[2][-1]
            )
        )
    g = Graph(id="0/0:aten_forward", level="aten_forward", frame_id=0, compile_id=0, nodes=tuple(nodes))
    return Run(name="nonstrict", graphs=(g,), regions=tuple(regions))


def _attributed(run: Run) -> dict[str, str | None]:
    return {n.name: n.baseline_graph for n in run.graphs[0].nodes}


def test_repeated_blocks_are_told_apart_by_the_order_the_baseline_graphs_ran():
    got = _attributed(assign_baseline_graphs(_baseline(RAN), _nonstrict(own_line=True), STACKS))
    assert got == {
        "addmm_0": "1/0:dynamo", "pow_0": "3/0:dynamo", "relu_0": "4/0:dynamo",
        "addmm_1": "1/1:dynamo", "pow_1": "3/0:dynamo", "relu_1": "4/1:dynamo",
        "addmm_2": "1/1:dynamo", "pow_2": "3/0:dynamo", "relu_2": "4/1:dynamo",
    }  # fmt: skip


def test_the_body_of_a_marked_function_is_found_among_its_lines_when_the_stack_stops_at_the_call():
    got = _attributed(assign_baseline_graphs(_baseline(RAN), _nonstrict(own_line=False), STACKS))
    assert {got[f"pow_{b}"] for b in range(3)} == {"3/0:dynamo"}
    assert got["addmm_0"] == "1/0:dynamo" and got["relu_2"] == "4/1:dynamo"


def test_without_the_run_order_an_op_compiled_twice_names_no_graph():
    got = _attributed(assign_baseline_graphs(_baseline(()), _nonstrict(own_line=True), STACKS))
    assert {got[f"pow_{b}"] for b in range(3)} == {"3/0:dynamo"}  # one graph computed it: that one
    assert {got[f"addmm_{b}"] for b in range(3)} == {None}  # 1/0 or 1/1: not guessed
    assert {got[f"relu_{b}"] for b in range(3)} == {None}


def test_param_names_from_dynamo_lifted_inputs():
    assert (
        param_name("L_self_modules_blocks_modules_0_modules_proj_parameters_weight_")
        == "blocks.0.proj.weight"
    )
    assert param_name("L_self_modules_q_proj_parameters_bias_") == "q_proj.bias"
    assert param_name("L_model_modules_bn_buffers_running_mean_") == "model.bn.running_mean"
    assert param_name("L_x_") is None
    assert param_name("L_stack0_parameters_weight_") is None  # a resume function's local: module unknown


def test_aten_placeholders_take_the_names_by_position_only_when_the_inputs_line_up():
    def ph(name: str, target: str) -> Node:
        return Node(name=name, op="placeholder", target=target)

    dyn = Graph(
        id="0/0:dynamo", level="dynamo", frame_id=0, compile_id=0,
        nodes=(ph("w", "L_self_modules_proj_parameters_weight_"), ph("x", "L_x_")),
    )  # fmt: skip
    aten = Graph(id="0/0:aten_forward", level="aten_forward", frame_id=0, compile_id=0,
                 nodes=(ph("primals_1", "primals_1"), ph("primals_2", "primals_2")))  # fmt: skip
    short = Graph(id="0/0:aten_inference", level="aten_inference", frame_id=0, compile_id=0,
                  nodes=(ph("arg0_1", "arg0_1"),))  # fmt: skip
    run = name_placeholders(Run(name="nonstrict", graphs=(dyn, aten, short)))
    assert [n.param for n in run.graphs[0].nodes] == ["proj.weight", None]
    assert [n.param for n in run.graphs[1].nodes] == ["proj.weight", None]
    assert [n.param for n in run.graphs[2].nodes] == [None]


def test_validate_rejects_a_baseline_graph_or_graph_run_that_does_not_exist():
    import dataclasses
    from pathlib import Path

    from nstviz.report import Report
    from nstviz.report.lint import problems

    report = Report.load_json(Path(__file__).parents[1] / "fixtures" / "module_block_break.report.json")
    assert problems(report) == []
    ns = report.runs["nonstrict"]
    g = next(g for g in ns.graphs if g.level == "aten_forward")
    i = next(k for k, n in enumerate(g.nodes) if n.baseline_graph)
    bad_node = dataclasses.replace(g.nodes[i], baseline_graph="9/9:dynamo")
    bad_g = dataclasses.replace(g, nodes=(*g.nodes[:i], bad_node, *g.nodes[i + 1 :]))
    runs = {
        **report.runs,
        "nonstrict": dataclasses.replace(ns, graphs=tuple(bad_g if x is g else x for x in ns.graphs)),
        "baseline": dataclasses.replace(report.runs["baseline"], graph_runs=("8/8:dynamo",)),
    }
    found = problems(dataclasses.replace(report, runs=runs))
    assert any("9/9:dynamo" in p for p in found) and any("8/8:dynamo" in p for p in found)


def test_backward_placeholders_that_are_saved_forward_inputs_take_their_parameter():
    def ph(name: str, target: str | None = None) -> Node:
        return Node(name=name, op="placeholder", target=target or name)

    def graph(level: str, *nodes: Node) -> Graph:
        return Graph(id=f"0/0:{level}", level=level, frame_id=0, compile_id=0, nodes=nodes)

    run = name_placeholders(
        Run(
            name="nonstrict",
            graphs=(
                graph("dynamo", ph("w", "L_self_parameters_w_"), ph("x", "L_x_")),
                graph("aten_forward", ph("primals_1"), ph("primals_2")),
                graph("aten_backward", ph("primals_1"), ph("tangents_1")),
            ),
        )
    )
    assert [n.param for n in run.graphs[2].nodes] == ["w", None]


def test_dynamo_nodes_and_the_opaque_call_name_their_baseline_graph_too():
    lin = "torch._C._nn.linear"

    def dyn(prefix: str, *nodes: Node) -> Graph:
        f, c = prefix.split("/")
        return Graph(id=f"{prefix}:dynamo", level="dynamo", frame_id=int(f), compile_id=int(c), nodes=nodes)

    base = _baseline(RAN)
    graphs = [dyn("1/0", _op("linear", lin, 0)) if g.id == "1/0:dynamo" else g for g in base.graphs]
    graphs = [dyn("1/1", _op("linear", lin, 0)) if g.id == "1/1:dynamo" else g for g in graphs]
    for p in ("4/0", "4/1"):
        graphs = [dyn(p, _op("relu", "torch.relu", 0)) if g.id == f"{p}:dynamo" else g for g in graphs]
    base = Run(name="baseline", graphs=tuple(graphs), graph_runs=RAN)
    ns = _nonstrict(own_line=True)
    call = Node(name="flat_apply_capture", op="call_function", target="nonstrict_trace", stack=2, region="r0")
    ns_dyn = Graph(
        id="0/0:dynamo", level="dynamo", frame_id=0, compile_id=0,
        nodes=(_op("child", lin, 2), call, _op("relu", "torch.relu", 2), _op("child_1", lin, 2),
               _op("relu_1", "torch.relu", 2)),
    )  # fmt: skip
    r0 = ns.regions[0]
    regions = (
        Region(id="r0", function="rms_scale", file=F, line_start=22, line_end=25, call_site=r0.call_site,
               call_graph="0/0:dynamo", call_node="flat_apply_capture", nodes={"0/0:aten_forward": ("pow_0",)}),
        *ns.regions[1:],
    )  # fmt: skip
    ns = Run(name="nonstrict", graphs=(ns_dyn, *ns.graphs), regions=regions)
    got = assign_baseline_graphs(base, ns, STACKS)
    assert {n.name: n.baseline_graph for n in got.graphs[0].nodes} == {
        "child": "1/0:dynamo",
        "flat_apply_capture": "3/0:dynamo",  # all of its inlined ops were computed by 3/0
        "relu": "4/0:dynamo",
        "child_1": "1/1:dynamo",
        "relu_1": "4/1:dynamo",
    }
