"""The advisor against real torch.compile runs (try_marks from _nst_compile, no capture core)."""

import numpy as np
import torch
from _nst_compile import make_try_marks as make_try
from _nst_compile import marked, record, resolver, seed_all

from nstviz.advisor.search import run_advisor


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
BLOCK = Block()


def model(x):
    y = outer(x.sin())
    y = BLOCK(y)
    y = data_dependent(y)
    return y.cos()


def jitter(x):
    x = x * 1.5
    print("jitter")
    return x + float(np.random.rand())


def noisy_model(x):
    for _ in range(2):
        x = jitter(x)
    return x


def test_advisor_on_real_compiles_finds_the_marks_and_explains_what_cannot_help():
    args = (torch.randn(2, 4),)
    base, out = record("baseline", model, args)
    assert len(base.breaks) == 3
    calls = []
    cands, rec = run_advisor(
        base, resolver(globals()), make_try(model, args, out, calls), budget_s=120, max_attempts=6
    )
    got = {c.function: c for c in cands}
    assert got["noisy"].status == "improved" and got["noisy"].outputs_match is True
    assert got["noisy"].why.startswith("contains the break at test_advisor_compile.py:")
    assert "GB0059" in got["noisy"].why
    assert got["outer"].status == "skipped"
    assert got["Block.stats"].status == "improved"
    # nonstrict_trace cannot trace a data-dependent .item() either: GB0251, not kept
    assert got["data_dependent"].status == "failed" and got["data_dependent"].gb_id == "GB0251"
    assert rec is not None and set(rec.functions) == {"noisy", "Block.stats"}
    assert rec.breaks_before == 3 and rec.breaks_after == 1 and rec.outputs_match is True
    assert len(calls) == 3

    # the emitted code, applied as written, gives the same break count: it rebinds the names
    # where they are looked up (this module's globals, the class)
    import sys

    this = sys.modules[noisy.__module__]
    saved = (this.noisy, Block.stats)
    try:
        exec(rec.code, {})
        assert this.noisy is not saved[0] and Block.stats is not saved[1]
        applied, _ = record("applied", model, args)
        assert len(applied.breaks) == 1
    finally:
        this.noisy, Block.stats = saved


def test_advisor_rejects_a_mark_that_changes_results():
    args = (torch.zeros(3),)
    base, out = record("baseline", noisy_model, args)
    assert len(base.breaks) == 1
    cands, rec = run_advisor(base, resolver(globals()), make_try(noisy_model, args, out), budget_s=60, max_attempts=3)
    got = {c.function: c for c in cands}
    # numpy randomness is drawn once, at trace time: both calls now add the same number
    assert got["jitter"].status == "worse" and got["jitter"].outputs_match is False
    assert "outputs differ from the baseline" in got["jitter"].error
    assert "likely cause: it reads np.random.rand (randomness)" in got["jitter"].error
    assert rec is None


def test_marking_helper_restores_trace_rules():
    from torch._dynamo import trace_rules

    def ids():
        return set(trace_rules._allowed_callable_ids()), set(trace_rules._nonstrict_trace_callable_ids())

    before = ids()
    with marked((noisy,)):
        assert id(noisy) in trace_rules._nonstrict_trace_callable_ids
    assert ids() == before
    seed_all(0)
