"""API behaviour: advisor wiring, progress events, per-run output, baseline graphs, truncation."""

from __future__ import annotations

import itertools

import torch

import nstviz
from nstviz.capture import _torch_compat, convert
from tests.capture.cases import corpus as c
from tests.capture.cases import seed

NST = _torch_compat.nonstrict_trace_spelling()


def test_auto_finds_the_function_and_reports_attempts():
    events: list[dict] = []
    report = nstviz.compare(c.loop_fn, torch.ones(3), auto=True, progress=events.append)
    # marking opaque_scale compiles the frame that ran eagerly, but explain's count stays 1 graph:
    # not an improvement (fewer graphs is), so it is reported and not recommended
    assert list(report.runs) == ["baseline", "attempt-1", "attempt-2"]
    first = report.candidates[0]
    assert (first.function, first.status, first.run) == ("opaque_scale", "no_change", "attempt-1")
    assert first.error == "1 fewer frame(s) run eagerly, but the same 1 graph: not an improvement"
    assert report.recommendation is None
    assert report.headline.nothing_marked
    phases = [e["phase"] for e in events]
    assert phases[0] == "baseline" and phases[-1] == "done" and "attempt-1" in phases
    assert all(set(e) == {"phase", "message", "elapsed_s", "runs_done", "runs_total"} for e in events)
    assert events[-1]["runs_done"] == events[-1]["runs_total"]
    # the total counts the planned attempts from the start: it is refined down, never up
    totals = [e["runs_total"] for e in events]
    assert totals == sorted(totals, reverse=True) and totals[0] > 3
    assert all(e["runs_done"] <= e["runs_total"] for e in events)


def test_auto_on_cell_with_fatal_baseline():
    src = open(seed.__file__).read() + "\ny = func(torch.ones(3))\n"
    ns: dict = {}
    report = nstviz.trace_code(src, ns, auto=True)
    assert report.recommendation.functions == ("get_magic_num",)
    nst = report.runs["nonstrict"]
    assert nst.error is None and nst.breaks == () and len(nst.regions) == 1
    assert torch.is_tensor(ns["y"])


def test_stdout_and_stderr_are_kept_per_run():
    cell = (
        "import sys\n"
        "print('hello from the cell')\n"
        "print('to stderr', file=sys.stderr)\n"
        "y = torch.compile(loop_fn)(torch.ones(2))\n"
    )
    report = nstviz.trace_code(cell, {"torch": torch, "loop_fn": c.loop_fn}, nonstrict=["loop_helper"])
    for run in report.runs.values():
        assert run.stdout == "hello from the cell\n"
        assert run.stderr.startswith("to stderr\n")


def test_nonstrict_nodes_know_their_baseline_graph():
    report = nstviz.compare(c.dict_fn, torch.ones(3))
    report = nstviz.compare(c.dict_fn, torch.ones(3), nonstrict=["dict_helper"])
    base_ids = {g.id for g in report.runs["baseline"].graphs if g.level == "dynamo"}
    aten = next(g for g in report.runs["nonstrict"].graphs if g.level == "aten_inference")
    owners = {n.name: n.baseline_graph for n in aten.nodes if n.op == "call_function"}
    assert set(owners.values()) <= base_ids | {None}
    # `x + 1` (line 21) ran before the break, `d["a"] + d["b"]` (line 22) in the resume graph
    assert owners["add"] == "0/0_1:dynamo" and owners["add_1"] == "3/0:dynamo"


def test_huge_graph_is_truncated_with_a_note(monkeypatch):
    monkeypatch.setattr(convert, "MAX_NODES_PER_GRAPH", 5)

    def many_ops(x):
        for _ in range(20):
            x = x.sin()
        return x

    report = nstviz.compare(many_ops, torch.ones(3))
    graph = report.runs["baseline"].graphs[0]
    assert graph.truncated and len(graph.nodes) == 5 and graph.op_count == 20
    assert any("only the first 5 nodes are kept" in n for n in report.notes)
    report.validate()


def test_dynamo_graph_node_metadata():
    torch.manual_seed(0)
    report = nstviz.compare(c.Stack(), torch.rand(2, 4), nonstrict=["Block.stats"])
    nst = report.runs["nonstrict"]
    dyn, aten = nst.graphs[0], nst.graphs[1]
    lin = next(n for n in dyn.nodes if n.module == "blocks.1.lin" and n.target.endswith("linear"))
    assert lin.module_type == "Linear" and lin.tensors[0].shape == (2, 4) and lin.tensors[0].dtype == "f32"
    call = next(n for n in dyn.nodes if n.nonstrict_call)
    assert report.stacks[call.stack][-1].line == 112
    addmm = [n for n in aten.nodes if n.target == "aten.addmm.default"]
    assert len(addmm) == 3 and all(n.from_node for n in addmm)
    assert {s.path for s in report.sources.values()} >= {c.__file__}


def test_training_cell_compares_updated_module_state():
    torch.manual_seed(0)
    model = c.Trainer()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    ns = {"model": model, "opt": opt, "torch": torch, "x": torch.rand(5, 4), "train_step": c.train_step}
    cell = "loss = torch.compile(train_step)(model, x)\nopt.step()\nopt.zero_grad()\n"
    report = nstviz.trace_code(cell, ns, nonstrict=["loop_helper"])
    paths = {d.path for d in report.outputs.details}
    assert {"loss", "model.state_dict()['lin.weight']", "model.state_dict()['lin.bias']"} <= paths
    assert report.outputs.match is True
    # one optimizer step happened (as after a normal run), not one per run
    torch.manual_seed(0)
    ref = c.Trainer()
    ref.load_state_dict(start)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    c.train_step(ref, ns["x"])
    ref_opt.step()
    assert torch.allclose(model.lin.weight, ref.lin.weight)


CELL_WITH_CLASS = '''
import zlib
import torch

class Norm(torch.nn.Module):
    def stats(self, x):
        k = zlib.crc32(b"n") % 3 + 1
        return x.mean(-1, keepdim=True) * k

    def forward(self, x):
        return x - self.stats(x)

model = torch.compile(Norm())
out = model(torch.ones(2, 3))
'''


def test_method_of_class_defined_in_the_cell():
    ns: dict = {}
    report = nstviz.trace_code(CELL_WITH_CLASS, ns, nonstrict=["Norm.stats"], filename="<class-cell>")
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    assert [(b.gb_id, b.location.line) for b in base.breaks] == [("GB0007", 7)]
    assert nst.breaks == () and [r.function for r in nst.regions] == ["Norm.stats"]
    assert [(r.file, r.line_start, r.line_end) for r in nst.regions] == [("<class-cell>", 6, 8)]
    assert nst.marked[0].applied


_calls = itertools.count(1)


@torch._dynamo.disable
def _next_call() -> float:
    return float(next(_calls))


def _noisy(x):
    return x * _next_call()  # a different factor on every call: two eager runs always differ


def test_nondeterministic_code_is_flagged():
    report = nstviz.compare(_noisy, torch.ones(2))
    assert report.outputs.nondeterministic is True
    # nothing marked: no nonstrict run (it would repeat the baseline)
    assert list(report.runs) == ["baseline"]
    assert [(cmp.left, cmp.right, cmp.match) for cmp in report.outputs.comparisons] == [
        ("eager", "baseline", False),
        ("eager", "eager (again)", False),
    ]
    deterministic = nstviz.compare(c.loop_fn, torch.ones(2))
    assert deterministic.outputs.nondeterministic is False
