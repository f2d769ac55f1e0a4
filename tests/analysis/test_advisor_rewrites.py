"""The advisor's source rewrites end to end: compare(auto=True) on toys, the paste in a fresh process."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import torch

import nstviz
from nstviz.passes.improvement import dynamo_graphs
from tests.analysis import _rewrite_toys as toys
from tests.helpers import fresh

REPO = Path(__file__).resolve().parents[2]


def _graphs_after_paste(code: str, model: str) -> int:
    """Paste ``code`` in a fresh process, build ``toys.<model>`` and count explain's graphs."""
    script = code + textwrap.dedent(f"""
        import json
        from tests.analysis import _rewrite_toys
        torch.manual_seed(0)
        m = _rewrite_toys.{model}().eval()
        e = torch._dynamo.explain(m)(torch.randn(3, 6))
        print(json.dumps({{"graphs": e.graph_count}}))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = fresh.run(["-c", script], timeout=240, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return int(json.loads(proc.stdout.strip().splitlines()[-1])["graphs"])


def test_data_dependent_if_is_rewritten_to_where_and_the_paste_gives_one_graph():
    torch.manual_seed(0)
    model = toys.Gated().eval()
    code_before = toys.gate.__code__
    report = nstviz.compare(model, torch.randn(3, 6), auto=True, budget_s=120, max_attempts=6)
    got = {c.function: c for c in report.candidates}
    kept = got["rewrite: gate (branch-where)"]
    # a branch on values: its rewrite goes before the mark (nonstrict_trace cannot branch on a fake tensor's value)
    assert (kept.kind, kept.status, kept.run) == ("rewrite", "improved", "attempt-1")
    assert (got["gate"].status, got["gate"].error) == ("skipped", "not needed: the marks kept already remove its breaks")
    assert "branch-where" in kept.why and "GB0170" in kept.why
    assert "4 -> 1 graphs" in kept.error and "outputs equal eager on 2 more input sets" in kept.error
    assert got["rewrite: gate (branch-cond)"].status == "skipped"
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after, rec.functions) == (4, 1, ())
    assert rec.outputs_match is True
    assert "torch.where(_nstviz_c, y__t, y__f)" in rec.code
    assert "_rewrite_toys.gate.__code__ = gate.__code__" in rec.code
    assert dynamo_graphs(report.runs["nonstrict"]) == 1  # the nonstrict run applied the rewrite
    assert toys.gate.__code__ is code_before  # nothing left patched
    assert _graphs_after_paste(rec.code, "Gated") == 1
    assert _graphs_after_paste("import torch\n", "Gated") == 4


def test_a_branch_with_a_side_effect_is_not_rewritten():
    torch.manual_seed(0)
    model = toys.Logged().eval()
    report = nstviz.compare(model, torch.randn(3, 6), auto=True, budget_s=120, max_attempts=6)
    rewrites = [c for c in report.candidates if c.kind == "rewrite"]
    # the print's own break (a builtin call) gets the custom op, which fails (no backward); the branch is not rewritten
    assert [(c.function, c.status) for c in rewrites] == [
        ("rewrite: logged", "rejected"), ("rewrite: logged (custom-op)", "failed")]
    assert rewrites[0].precheck == ("`if h.sum() > 0`: a branch is not side-effect free tensor code; not rewritten",)
    assert report.recommendation is None


def test_a_c_call_nothing_traces_becomes_a_custom_op_with_its_fake_from_recorded_calls():
    torch.manual_seed(0)
    model = toys.Quantized().eval()
    code_before = toys.floor_quarters.__code__
    with torch.no_grad():
        report = nstviz.compare(model, torch.randn(3, 6), auto=True, budget_s=120, max_attempts=6, time=False)
    got = {c.function: c for c in report.candidates}
    assert got["floor_quarters"].status == "failed"  # a data-dependent .tolist(): no mark traces it
    kept = got["rewrite: floor_quarters (custom-op)"]
    assert (kept.kind, kept.status) == ("rewrite", "improved"), kept.error
    assert "fake from 3 observed calls" in kept.why and "outputs equal eager on 2 more input sets" in kept.error
    rec = report.recommendation
    assert rec is not None and rec.graphs_after == 1 < rec.graphs_before
    assert '@torch.library.custom_op("nstviz_fix::floor_quarters", mutates_args=())' in rec.code
    assert "_floor_quarters_eager = _rewrite_toys.floor_quarters" in rec.code
    assert "_rewrite_toys.floor_quarters = floor_quarters" in rec.code
    assert toys.floor_quarters.__code__ is code_before  # nothing left patched
    from torch._library.custom_ops import OPDEFS

    assert not [name for name in OPDEFS if name.startswith("nstviz_fix::")]  # no op left registered
    assert _graphs_after_paste(rec.code, "Quantized") == 1
    assert _graphs_after_paste("import torch\n", "Quantized") == rec.graphs_before


RECOMPILES = '''
import torch

@torch.compile(backend="eager")
def step(x):
    return x.sin() * 2

ys = [step(torch.ones(n)) for n in range(1, 12)]
'''


def test_recompile_limit_names_the_failing_guard_and_dynamic_sizes_are_kept_for_fewer_graphs():
    # automatic dynamic shapes off (as a user may set it): each new size recompiles, 8 graphs, then eager
    with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        report = nstviz.trace_code(RECOMPILES, {}, auto=True, budget_s=120, max_attempts=4)
    assert dynamo_graphs(report.runs["baseline"]) == 8
    cand = {c.function: c for c in report.candidates}["config: automatic_dynamic_shapes=True"]
    assert cand.why == (
        "step hit the recompile limit, failing guard: tensor 'x' size mismatch at index 0. expected 8, actual 9: "
        "sizes that change compiled as dynamic (dynamic=None)"
    )
    assert (cand.status, cand.error) == ("improved", "8 -> 2 graphs")
    rec = report.recommendation
    assert rec is not None and (rec.config, rec.graphs_before, rec.graphs_after, rec.outputs_match) == (
        ("automatic_dynamic_shapes",), 8, 2, True
    )
    assert "torch._dynamo.config.automatic_dynamic_shapes = True" in rec.code


def nonzero_after_print(x):
    y = x * 2
    m = y > 0
    print("hi")
    idx = torch.nonzero(m)
    return idx.sum() + y.sum()


def test_a_config_hint_that_keeps_the_graph_count_is_not_recommended():
    report = nstviz.compare(nonzero_after_print, torch.randn(3, 4), auto=True, budget_s=120, max_attempts=4)
    cfg = {c.function: c for c in report.candidates}["config: capture_dynamic_output_shape_ops=True"]
    assert cfg.status == "no_change" and "(same 2 graphs)" in cfg.error, cfg.error
    assert report.recommendation is None
