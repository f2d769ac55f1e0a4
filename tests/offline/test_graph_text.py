"""print_readable graph text (as TORCH_TRACE logs it) -> Report nodes with edges, types, locations."""

from __future__ import annotations

from nstviz.offline.graph_text import parse_graph_text, tensor_info
from nstviz.report import Graph, Location, TensorInfo
from nstviz.tracing.stacks import StackTable

# Copied from the after/ fixture's rank-0 log (dynamo_output_graph 4/0), user path shortened.
DYNAMO = """class GraphModule(torch.nn.Module):
    def forward(self, L_self_modules_inp_parameters_weight_: "f32[8, 8][8, 1]cpu", L_x_: "f32[4, 8][8, 1]cpu"):
        l_self_modules_inp_parameters_weight_ = L_self_modules_inp_parameters_weight_
        l_x_ = L_x_

        # File: /work/proj/train.py:49 in forward, code: h = torch.relu(self.inp(x))
        linear: "f32[4, 8][8, 1]cpu" = torch._C._nn.linear(l_x_, l_self_modules_inp_parameters_weight_, None);  l_x_ = l_self_modules_inp_parameters_weight_ = None
        h: "f32[4, 8][8, 1]cpu" = torch.relu(linear);  linear = None

        # File: /work/proj/train.py:50 in forward, code: h = rms_scale(h)
        rms_scale_callable : torch._higher_order_ops.invoke_leaf_function._LeafCallable = self.rms_scale_callable
        rms_scale_input_spec : torch.utils._pytree.TreeSpec = self.rms_scale_input_spec
        flat_apply_capture = torch__dynamo_variables_torch_flat_apply_capture(rms_scale_callable, rms_scale_input_spec, h);  rms_scale_callable = rms_scale_input_spec = h = None
        h_1: "f32[4, 8][8, 1]cpu" = flat_apply_capture[0];  flat_apply_capture = None
        view: "f32[32][1]cpu" = h_1.view(-1)
        return (view,)
"""

# An AOT forward graph: multi-line signature and return, aten targets, symbolic sizes.
ATEN = """class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "f32[8, 8][8, 1]cpu",  # PlainAOTInput(idx=0)
        primals_2: "f32[s0, 8][8, 1]cpu",  # PlainAOTInput(idx=1)
    ):
        # File: /work/proj/train.py:49 in forward, code: h = torch.relu(self.inp(x))
        t: "f32[8, 8][1, 8]cpu" = torch.ops.aten.t.default(primals_1);  primals_1 = None
        mm: "f32[s0, 8][8, 1]cpu" = torch.ops.aten.mm.default(primals_2, t);  t = None
        return (
            mm,  # PlainAOTOutput(idx=0)
            primals_2,  # SavedForBackwardsAOTOutput(idx=0)
        )
"""


def _graph(text: str, level: str):
    stacks = StackTable()
    g = parse_graph_text(text.splitlines(), Graph(id=f"4/0:{level}", level=level, frame_id=4, compile_id=0), stacks=stacks)
    return g, stacks


def test_dynamo_graph_nodes_edges_and_the_nonstrict_call() -> None:
    g, stacks = _graph(DYNAMO, "dynamo")
    rows = [(n.name, n.op, n.target, n.inputs) for n in g.nodes]
    assert rows == [
        ("l_self_modules_inp_parameters_weight_", "placeholder", "L_self_modules_inp_parameters_weight_", ()),
        ("l_x_", "placeholder", "L_x_", ()),
        ("linear", "call_function", "torch._C._nn.linear", ("l_x_", "l_self_modules_inp_parameters_weight_")),
        ("h", "call_function", "torch.relu", ("linear",)),
        ("rms_scale_callable", "get_attr", "rms_scale_callable", ()),
        ("rms_scale_input_spec", "get_attr", "rms_scale_input_spec", ()),
        ("flat_apply_capture", "call_function", "nonstrict_trace", ("rms_scale_callable", "rms_scale_input_spec", "h")),
        ("h_1", "call_function", "operator.getitem", ("flat_apply_capture",)),
        ("view", "call_method", "view", ("h_1",)),
        ("output", "output", "output", ("view",)),
    ]
    assert g.op_count == 5 and not g.truncated
    by_name = {n.name: n for n in g.nodes}
    assert by_name["flat_apply_capture"].nonstrict_call is True
    assert by_name["h"].tensors == (TensorInfo(shape=(4, 8), dtype="f32", device="cpu"),)
    assert by_name["rms_scale_callable"].value == "_LeafCallable"
    assert stacks.stacks[by_name["h"].stack] == (
        Location(file="/work/proj/train.py", line=49, function="forward", code="h = torch.relu(self.inp(x))"),
    )
    assert stacks.stacks[by_name["flat_apply_capture"].stack][0].line == 50
    assert by_name["l_x_"].stack is None
    assert g.code == DYNAMO.rstrip("\n")


def test_aten_graph_multiline_signature_and_return() -> None:
    g, _ = _graph(ATEN, "aten_forward")
    assert [(n.name, n.op, n.target, n.inputs) for n in g.nodes] == [
        ("primals_1", "placeholder", "primals_1", ()),
        ("primals_2", "placeholder", "primals_2", ()),
        ("t", "call_function", "aten.t.default", ("primals_1",)),
        ("mm", "call_function", "aten.mm.default", ("primals_2", "t")),
        ("output", "output", "output", ("mm", "primals_2")),
    ]
    assert g.nodes[1].tensors == (TensorInfo(shape=("s0", 8), dtype="f32", device="cpu"),)


def test_node_cap_counts_every_op_and_flags_truncation() -> None:
    stacks = StackTable()
    g = parse_graph_text(ATEN.splitlines(), Graph(id="g", level="aten_forward", frame_id=0, compile_id=0), stacks=stacks, max_nodes=3)
    assert [n.name for n in g.nodes] == ["primals_1", "primals_2", "t"]
    assert (g.op_count, g.truncated) == (2, True)


def test_tensor_types() -> None:
    assert tensor_info("bf16[2, s1][s1, 1]cuda:0") == TensorInfo(shape=(2, "s1"), dtype="bf16", device="cuda:0")
    assert tensor_info("i64[][]cpu") == TensorInfo(shape=(), dtype="i64", device="cpu")
    assert tensor_info("Sym(s0)") is None


def test_text_without_forward_gives_an_empty_graph() -> None:
    g, _ = _graph("not a graph\n", "dynamo")
    assert g.nodes == () and g.op_count == 0


def test_infix_and_unary_operators_are_operator_calls() -> None:
    text = """class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4][1]cpu", L_y_: "f32[4][1]cpu"):
        l_x_ = L_x_
        l_y_ = L_y_
        a: "f32[4][1]cpu" = l_x_ // 2
        b: "f32[4][1]cpu" = a ** l_y_
        c: "b8[4][1]cpu" = b >= 1e-06
        d: "f32[4][1]cpu" = -a
        e: "f32[4][1]cpu" = l_x_ @ l_y_
        return (c, d, e)
"""
    g, _ = _graph(text, "dynamo")
    assert [(n.name, n.target, n.inputs) for n in g.nodes if n.op == "call_function"] == [
        ("a", "operator.floordiv", ("l_x_",)),
        ("b", "operator.pow", ("a", "l_y_")),
        ("c", "operator.ge", ("b",)),
        ("d", "operator.neg", ("a",)),
        ("e", "operator.matmul", ("l_x_", "l_y_")),
    ]
    assert g.nodes[4].tensors[0].dtype == "b8"
