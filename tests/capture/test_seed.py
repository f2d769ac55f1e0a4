"""The seed example through trace_code and compare: baseline breaks, nonstrict is one graph."""

from __future__ import annotations

import zlib

import torch

import nstviz
from nstviz.report import Report
from tests.capture.cases import seed

SEED_FILE = seed.__file__


def test_compare_seed_fullgraph_fatal_then_one_graph():
    report = nstviz.compare(seed.func, torch.rand(3), nonstrict=["get_magic_num"])
    report.validate()
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.fatal, b.location.file, b.location.line, b.location.function) for b in base.breaks] == [
        ("GB0007", True, SEED_FILE, 8, "get_magic_num")
    ]
    assert [loc.line for loc in base.breaks[0].stack] == [14, 8]
    # the fullgraph error stops the compile: reached once, no graph break counted by Dynamo
    assert (base.breaks[0].count, base.breaks[0].caused, base.dynamo_graph_breaks) == (1, 0, 0)
    assert report.counts["baseline"].graph_breaks == 0
    assert base.graphs == () and base.error.startswith("Unsupported")
    assert nst.breaks == () and nst.error is None
    assert [g.level for g in nst.graphs] == ["dynamo", "aten_inference"]
    (region,) = nst.regions
    assert region.function == "get_magic_num" and (region.file, region.line_start, region.line_end) == (SEED_FILE, 7, 9)
    inlined = region.nodes["0/0:aten_inference"]
    assert set(inlined) == {"_tensor_constant0", "lift_fresh_copy", "mul", "ones", "sin", "add"}
    aten = nst.graphs[1]
    assert {n.name for n in aten.nodes if n.region == "r0"} == set(inlined)
    call = next(n for n in nst.graphs[0].nodes if n.nonstrict_call)
    assert (region.call_graph, region.call_node) == ("0/0:dynamo", call.name)
    assert [m.applied for m in nst.marked] == [True]
    assert len(report.diff.resolved) == 1 and not report.diff.remaining and not report.diff.introduced
    assert report.counts["nonstrict"].full_graph and report.counts["baseline"].graphs == 0
    # compare() of a compiled object whose baseline raised: eager vs nonstrict still checked
    assert report.outputs.comparisons and all(c.match for c in report.outputs.comparisons)
    assert report.summary().splitlines()[0] == "1 break → 0, fullgraph failed → 1 graph, outputs match eager"
    assert Report.from_json(report.to_json()) == report


def test_trace_code_seed_defined_in_cell():
    source = open(SEED_FILE).read() + "\ny = func(torch.ones(3))\n"
    ns: dict = {}
    report = nstviz.trace_code(source, ns, nonstrict=["get_magic_num"], filename="<seed-cell>")
    report.validate()
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.location.file, b.location.line, b.fatal) for b in base.breaks] == [("GB0007", "<seed-cell>", 8, True)]
    assert nst.breaks == () and len(nst.regions) == 1
    assert report.user_exception is None
    magic = (zlib.crc32(b"nstviz") % 7) * 2 + torch.ones(1).sin()
    assert torch.allclose(ns["y"], torch.ones(3) + magic)
    assert "<seed-cell>" in report.sources


def test_trace_code_baseline_raised_outputs_checked_against_eager():
    # the baseline dies on the fatal break: the nonstrict run is checked against an eager run
    source = open(SEED_FILE).read() + "\nx = torch.rand(3)\ny = func(x)\nprint('ran')\n"
    ns: dict = {}
    phases: list[str] = []
    report = nstviz.trace_code(
        source, ns, nonstrict=["get_magic_num"], filename="<seed-eager>", progress=lambda p: phases.append(p["phase"])
    )
    assert report.runs["baseline"].error is not None and report.runs["nonstrict"].error is None
    assert report.outputs.match is True
    assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [("eager", "nonstrict", True)]
    assert report.summary().splitlines()[0] == "1 break → 0, fullgraph failed → 1 graph, outputs match eager"
    # the reference runs before the nonstrict run, so the namespace ends as after the nonstrict run
    assert phases.index("eager") < phases.index("nonstrict")
    assert torch.compiler.is_compiling() is False
    from torch._dynamo.eval_frame import _stance

    assert _stance.stance == "default"  # the stance is put back
    assert report.runs["nonstrict"].stdout == "ran\n"  # the eager run's print went nowhere


def test_call_site_form_is_reported_as_in_source_region():
    report = nstviz.compare(seed.func_call_site, torch.rand(3))
    # the code's own nonstrict_trace applies as written; nothing else marked: no nonstrict run
    assert list(report.runs) == ["baseline"]
    assert report.headline.chips[0].text == "nothing was marked (baseline only)"
    base = report.runs["baseline"]
    assert base.breaks == ()
    assert len(base.regions) == 1 and base.regions[0].function == "get_magic_num"
    assert [(m.origin, m.qualname) for m in base.marked] == [("in_source", "get_magic_num")]


def test_call_site_form_strict_baseline_lifts_the_mark():
    report = nstviz.compare(seed.func_call_site, torch.rand(3), baseline="strict")
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.location.line, b.fatal) for b in base.breaks] == [("GB0007", 8, True)]
    assert nst.breaks == () and len(nst.regions) == 1


def test_decorator_form_in_cell_strict_baseline_and_marks_kept():
    from torch._dynamo import trace_rules

    from tests.capture.cases import decorated

    source = open(decorated.__file__).read()
    ns: dict = {}
    report = nstviz.trace_code(source, ns, baseline="strict", filename="<decorated-cell>")
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.location.line, b.fatal) for b in base.breaks] == [("GB0007", 9, True)]
    assert nst.breaks == () and [r.function for r in nst.regions] == ["scale"]
    assert [(m.origin, m.qualname, m.spec) for m in nst.marked] == [("in_source", "scale", "<source>")]
    assert report.summary().splitlines()[0] == "1 break → 0, fullgraph failed → 1 graph, outputs match eager"
    # the cell's own decorated function stays registered after the call
    assert id(ns["scale"]) in trace_rules._nonstrict_trace_callable_ids()
    assert torch.is_tensor(ns["y"])
