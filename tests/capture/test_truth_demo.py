"""What the view says about the demo must be so (issue "The view a person sees", items 3 and 16).

One real capture of the demo (``rms_scale`` marked) checks, against what the baseline did:

- Merged mode's attribution: each nonstrict op names the baseline graph that computed it. The
  baseline split blocks 0-2 over six graphs (``1/0_1`` block 0's Linear, ``3/0`` the body of
  ``rms_scale`` in every block, ``4/0`` block 0's relu and residual, ``1/1_1``/``4/1`` the
  same for blocks 1 and 2 after the recompile, ``5/0`` the head); every one appears where its
  code is.
- The Node tab's stack of an op inlined from ``rms_scale`` reaches its own line (25), not only
  the call site (36).
- ATen placeholders carry the parameter they stand for (``blocks.0.proj.weight``).
"""

from __future__ import annotations

import pytest

import nstviz
from nstviz.examples import DEMO_SCRIPT


@pytest.fixture(scope="module")
def report() -> nstviz.Report:
    src = DEMO_SCRIPT.read_text(encoding="utf-8")
    return nstviz.trace_code(
        src, {"__name__": "__main__"}, nonstrict=["rms_scale"], filename=str(DEMO_SCRIPT)
    )


def _aten(report: nstviz.Report):
    run = report.runs["nonstrict"]
    return next(g for g in run.graphs if g.id == "0/0:aten_forward")


def _line_of(report: nstviz.Report, text: str) -> int:
    return next(i for i, line in enumerate(DEMO_SCRIPT.read_text().splitlines(), 1) if text in line)


def test_each_nonstrict_op_names_the_baseline_graph_that_computed_it(report):
    base = report.runs["baseline"]
    assert base.graph_runs[:10] == (
        "1/0_1:dynamo", "3/0:dynamo", "4/0:dynamo",
        "1/1_1:dynamo", "3/0:dynamo", "4/1:dynamo",
        "1/1_1:dynamo", "3/0:dynamo", "4/1:dynamo",
        "5/0:dynamo",
    )  # fmt: skip
    graph = _aten(report)
    got = {}
    for n in graph.nodes:
        if n.op != "call_function":
            continue
        who = "rms" if n.region is not None else (n.module or "")
        block = (n.module or "head").split(".")[1] if (n.module or "").startswith("blocks.") else "head"
        got.setdefault((block, who.rsplit(".", 1)[-1] if who != "rms" else "rms"), set()).add(
            n.baseline_graph
        )
    assert got == {
        ("0", "proj"): {"1/0_1:dynamo"},
        ("0", "rms"): {"3/0:dynamo"},
        ("0", "0"): {"4/0:dynamo"},
        ("1", "proj"): {"1/1_1:dynamo"},
        ("1", "rms"): {"3/0:dynamo"},
        ("1", "1"): {"4/1:dynamo"},
        ("2", "proj"): {"1/1_1:dynamo"},
        ("2", "rms"): {"3/0:dynamo"},
        ("2", "2"): {"4/1:dynamo"},
        ("head", "head"): {"5/0:dynamo"},
    }
    with_ops = {g.id for g in base.graphs if g.level == "dynamo" and g.op_count}
    assert {n.baseline_graph for n in graph.nodes if n.baseline_graph} == with_ops


def test_an_op_inlined_from_the_nonstrict_function_has_its_own_line(report):
    own = _line_of(report, "return h * torch.rsqrt")
    call = _line_of(report, "return x + torch.relu(rms_scale")
    stacks = report.stacks
    for n in _aten(report).nodes:
        if n.region is None or n.op != "call_function":
            continue
        lines = [loc.line for loc in stacks[n.stack]]
        assert lines[-2:] == [call, own], (n.name, lines)
        assert stacks[n.stack][-1].function == "rms_scale"


def test_aten_placeholders_name_their_parameters(report):
    params = [n.param for n in _aten(report).nodes if n.op == "placeholder"]
    assert params == [
        "blocks.0.proj.weight", "blocks.0.proj.bias", None,
        "blocks.1.proj.weight", "blocks.1.proj.bias",
        "blocks.2.proj.weight", "blocks.2.proj.bias",
        "head.weight", "head.bias",
    ]  # fmt: skip


def test_merged_mode_at_the_dynamo_level_names_the_same_graphs(report):
    run = report.runs["nonstrict"]
    dyn = next(g for g in run.graphs if g.id == "0/0:dynamo")
    owner = {n.name: n.baseline_graph for n in dyn.nodes}
    assert owner["flat_apply_capture"] == "3/0:dynamo"  # the opaque call: where its body ran
    assert (owner["child"], owner["child_1"], owner["child_2"]) == ("1/0_1:dynamo", "1/1_1:dynamo", "1/1_1:dynamo")
    assert (owner["relu"], owner["relu_1"], owner["relu_2"]) == ("4/0:dynamo", "4/1:dynamo", "4/1:dynamo")
    assert owner["linear_3"] == "5/0:dynamo"
    assert owner["getitem"] is None  # unpacking the opaque call's output: no baseline graph did that
