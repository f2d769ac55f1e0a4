from __future__ import annotations

import pytest

from nstviz.passes.assemble import build_report
from nstviz.report import Break, Graph, Location, Node, OutputCheck, Region, Report, Run


def make_report(title: str = "seed <example>") -> Report:
    """A small hand-built Report: one fatal break in the baseline, one region in nonstrict."""
    loc = Location(file="cell-1", line=5, function="func", code="return x + get_magic_num()")
    brk = Break(
        gb_id="GB0026",
        reason="Call to `torch._dynamo.graph_break()` <script>alert(1)</script>",
        count=1,
        fatal=True,
        location=loc,
    )
    base_graph = Graph(
        id="0/0:dynamo",
        level="dynamo",
        frame_id=0,
        compile_id=0,
        nodes=(
            Node(name="l_x_", op="placeholder", target="L_x_"),
            Node(name="output", op="output", target="output"),
        ),
    )
    nst_nodes = (
        Node(name="arg0_1", op="placeholder", target="arg0_1"),
        Node(name="sin", op="call_function", target="aten.sin.default", inputs=("arg0_1",), region="r0"),
        Node(name="add", op="call_function", target="aten.add.Tensor", inputs=("arg0_1", "sin")),
        Node(name="output", op="output", target="output", inputs=("add",)),
    )
    nst_graph = Graph(
        id="0/0:aten_inference", level="aten_inference", frame_id=0, compile_id=0, nodes=nst_nodes, op_count=2
    )
    nst_dynamo = Graph(id="0/0:dynamo", level="dynamo", frame_id=0, compile_id=0, op_count=2)
    region = Region(id="r0", function="get_magic_num", nodes={"0/0:aten_inference": ("sin",)})
    return build_report(
        torch_version="2.13.0",
        title=title,
        runs={
            "baseline": Run(name="baseline", graphs=(base_graph,), breaks=(brk,)),
            "nonstrict": Run(name="nonstrict", graphs=(nst_dynamo, nst_graph), regions=(region,)),
        },
        outputs=OutputCheck(match=True, max_abs_diff=0.0),
    )


@pytest.fixture
def report() -> Report:
    return make_report()


@pytest.fixture(scope="session")
def ip():
    """The in-process IPython shell (one per test session), with nstviz's magics loaded."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "nstviz")
    return shell
