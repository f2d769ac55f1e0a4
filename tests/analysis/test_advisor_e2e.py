"""The advisor, non-input reads and output check through the public API (real runs)."""

import numpy as np
import pytest
import torch

import nstviz
from nstviz.capture._torch_compat import nonstrict_trace_spelling
from nstviz.report import Report

BREAKS = '''
import torch

def noisy(x):
    print("noisy called")
    return x * 2

def outer(x):
    return noisy(x) + 1

def data_dependent(x):
    n = int(x.abs().sum().item())
    return x + n

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def stats(self, x):
        print("stats")
        return x.mean(-1, keepdim=True)

    def forward(self, x):
        return self.lin(x) - self.stats(x)

torch.manual_seed(0)
blk = Block()

@torch.compile
def model(x):
    y = outer(x.sin())
    y = blk(y)
    y = data_dependent(y)
    return y.cos()

out = model(torch.randn(2, 4))
'''


def test_trace_code_auto_recommends_marks_and_explains_the_data_dependent_break():
    ns: dict = {}
    report = nstviz.trace_code(BREAKS, ns, auto=True, budget_s=120, max_attempts=6)
    got = {c.function: c for c in report.candidates}
    assert got["noisy"].status == "improved" and got["noisy"].why.startswith("contains the break at")
    assert got["Block.stats"].status == "improved"
    assert got["outer"].status == "skipped" and got["Block.forward"].status in ("skipped", "rejected")
    # the .item() break's own hint comes first (no mark traces .item()) and removes that break
    cfg = got["config: capture_scalar_outputs=True"]
    assert cfg.run == "attempt-1"
    assert cfg.kind == "config" and cfg.status == "improved" and cfg.outputs_match is True
    assert cfg.breaks_before == 3 and cfg.breaks_after == 2
    dd = got["data_dependent"]
    assert dd.status == "skipped" and dd.error.startswith("not needed")
    rec = report.recommendation
    assert rec is not None and set(rec.functions) == {"noisy", "Block.stats"}
    assert cfg.code == "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n"
    assert rec.breaks_before == 3 and rec.breaks_after == 0 and rec.outputs_match is True
    assert rec.config == ("capture_scalar_outputs",)
    assert f"Block.stats = {nonstrict_trace_spelling()}(Block.stats)" in rec.code
    assert rec.code.endswith("torch._dynamo.config.capture_scalar_outputs = True\n")
    # each attempt is a run of its own, and everything survives JSON
    assert {c.run for c in report.candidates if c.run} <= set(report.runs)
    assert Report.from_json(report.to_json()) == report
    summary = report.summary()
    assert "advisor" in summary

    # the recommended code, applied in the user's namespace, does what the report says
    ns2: dict = {}
    exec(BREAKS.replace("out = model(torch.randn(2, 4))", ""), ns2)
    saved = torch._dynamo.config.get_config_copy()  # the code sets a config flag: restored afterwards
    try:
        exec(rec.code, ns2)
        torch._dynamo.reset()
        explained = torch._dynamo.explain(ns2["model"]._torchdynamo_orig_callable)(torch.randn(2, 4))
    finally:
        torch._dynamo.config.load_config(saved)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    torch._dynamo.reset()


GLOBAL_READ = '''
import torch

SCALE = torch.tensor(2.0)

def helper(x):
    print("helper")
    return x * SCALE

@torch.compile
def f(x):
    return helper(x) + 1

a = f(torch.ones(3))
SCALE = torch.tensor(5.0)
b = f(torch.ones(3))
'''


def test_a_rebound_global_read_changes_results_and_the_report_says_why():
    report = nstviz.trace_code(GLOBAL_READ, {}, nonstrict=("helper",))
    assert report.diff.resolved  # the print break is gone...
    assert report.outputs.match is False  # ...but b is stale under nonstrict_trace
    bad = {d.path: d for d in report.outputs.details if d.match is False}
    assert set(bad) == {"b"} and bad["b"].max_abs_diff == pytest.approx(3.0)
    marked = report.runs["nonstrict"].marked[0]
    reads = {(r.name, r.kind): r for r in marked.reads}
    assert ("SCALE", "global") in reads
    assert "if you rebind SCALE later, the compiled code keeps using the old tensor" in reads[("SCALE", "global")].detail
    region_reads = {r.name for reg in report.runs["nonstrict"].regions for r in reg.reads}
    assert "SCALE" in region_reads


def jitter(x):
    x = x * 1.5
    print("jitter")
    return x + float(np.random.rand())


def noisy_model(x):
    for _ in range(2):
        x = jitter(x)
    return x


def test_compare_auto_refuses_a_mark_that_changes_results():
    report = nstviz.compare(noisy_model, torch.zeros(3), auto=True, budget_s=60, max_attempts=3)
    got = {c.function: c for c in report.candidates}
    c = got["jitter"]
    assert c.status == "worse" and c.outputs_match is False
    assert "likely cause: it reads np.random.rand (randomness)" in c.error
    # not the mark: the custom op that runs jitter eagerly, drawing from numpy at run time as eager does
    # (verified from the same RNG states as eager since the numpy-op work)
    rec = report.recommendation
    assert rec is not None and rec.functions == () and "torch.library.custom_op" in rec.code
    assert got["rewrite: jitter (custom-op)"].outputs_match is True


SEED_FULLGRAPH = '''
import torch

def get_magic_num():
    print("computing the magic number")
    return 42

def other(x):
    print("other")
    return x - 1

@torch.compile(fullgraph=True)
def func(x):
    y = x + get_magic_num()
    return other(y).sin()

out = func(torch.rand(10))
'''


def test_fullgraph_failures_are_walked_one_fatal_break_at_a_time():
    report = nstviz.trace_code(SEED_FULLGRAPH, {}, auto=True, budget_s=120, max_attempts=4)
    got = {c.function: c for c in report.candidates}
    # marking get_magic_num moves the fatal break on to `other`, which the baseline never reached
    assert got["get_magic_num"].status == "improved"
    assert got["get_magic_num"].breaks_before == 1 and got["get_magic_num"].breaks_after == 1
    assert got["other"].status == "improved" and got["other"].breaks_after == 0
    rec = report.recommendation
    assert rec is not None and rec.functions == ("get_magic_num", "other") and rec.breaks_after == 0
    assert report.counts["nonstrict"].full_graph


def masked(x, mask):
    print("masked")
    return x if mask is None else x * mask


def model_with_none_mask(x):
    mask = None  # None at run time: the call-site pre-check cannot see it, the attempt does
    return masked(x.sin(), mask).cos()


def test_a_none_argument_seen_only_at_run_time_fails_with_gb0236():
    report = nstviz.compare(model_with_none_mask, torch.ones(3), auto=True, budget_s=60, max_attempts=3)
    got = {c.function: c for c in report.candidates}
    c = got["masked"]
    assert c.status == "failed" and c.gb_id == "GB0236", c
    assert "Invalid input type for nonstrict_trace-ed function" in c.error
    assert "leave a None parameter at its default" in c.error
    assert "model_with_none_mask" not in got  # the compiled entry point is never a candidate
    # then through an adapter that drops the None: the print's break is gone
    adapter = got["adapter: masked"]
    assert (adapter.kind, adapter.status, adapter.breaks_before, adapter.breaks_after, adapter.outputs_match) == (
        "adapter", "improved", 1, 0, True
    )
    rec = report.recommendation
    assert (rec.functions, rec.adapters, rec.breaks_after) == ((), ("masked",), 0)


def test_auto_refuses_a_helper_whose_global_read_goes_stale():
    report = nstviz.trace_code(GLOBAL_READ, {}, auto=True, budget_s=60, max_attempts=3)
    c = {c.function: c for c in report.candidates}["helper"]
    assert c.status == "worse" and c.outputs_match is False
    assert "outputs differ from the baseline at b" in c.error
    assert "likely cause: it reads SCALE (global)" in c.error
    assert report.recommendation is None
