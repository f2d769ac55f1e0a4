"""Early rewrites at different breaks tried in one attempt when one at a time would not fit (nstviz.advisor.batch).

Real compiles of a cell with a branch on tensor values in each of two helpers: each branch breaks
the graph (GB0170) and each gets its ``branch-where`` rewrite, queued before any mark.
"""

from __future__ import annotations

import nstviz

TWO_BRANCHES = '''
import torch
def clip(x):
    s = x.abs().max()
    if s > 1:
        x = x / s
    return x

def shift(x):
    m = x.mean()
    if m > 0:
        x = x - m
    return x

@torch.compile(backend="eager")
def f(x):
    y = clip(x * 2)
    y = torch.sin(y)
    y = shift(y + 1)
    return y * 3
out = f(torch.linspace(-3, 3, 7))
'''

# shift's rewrite computes both sides: `k // m` raises where m is 0 (on the negated inputs)
ONE_FAILS = TWO_BRANCHES.replace(
    """def shift(x):
    m = x.mean()
    if m > 0:
        x = x - m
    return x""",
    """def shift(x):
    m = (x > 2.5).sum()
    k = (x * 10).long()
    if m > 0:
        k = k // m
    return k.float()""",
).replace("torch.linspace(-3, 3, 7)", "torch.linspace(0, 3, 7)")

WHERE = ("rewrite: clip (branch-where)", "rewrite: shift (branch-where)")


def _by_name(report):
    return {c.function: c for c in report.candidates}


def test_rewrites_that_would_not_fit_one_at_a_time_are_kept_from_one_attempt():
    ns: dict = {}
    report = nstviz.trace_code(TWO_BRANCHES, ns, auto=True, backend="eager", max_attempts=1)
    by = _by_name(report)
    clip, shift = (by[k] for k in WHERE)
    assert (clip.status, clip.run, shift.status, shift.run) == ("improved", "attempt-1", "improved", "attempt-1")
    assert clip.error.startswith("tried in one attempt with rewrite: shift (branch-where): 7 -> 1 graphs;"), clip.error
    assert "outputs equal eager on 2 more input sets" in shift.error
    assert [n for n in report.runs if n.startswith("attempt-")] == ["attempt-1"]
    rec = report.recommendation
    assert rec is not None and (rec.graphs_before, rec.graphs_after, rec.outputs_match) == (7, 1, True)
    assert rec.code.count("torch.where(_nstviz_c") == 2  # both rewrites in the pasted code
    assert "_nstviz_c" not in ns["clip"].__code__.co_varnames  # the cell's own functions are as written again
    assert "advisor: apply the recommended code (graphs 7 -> 1, breaks 2 -> 0" in report.summary()


def test_rewrites_that_fit_one_at_a_time_are_tried_one_at_a_time():
    report = nstviz.trace_code(TWO_BRANCHES, {}, auto=True, backend="eager", max_attempts=8)
    by = _by_name(report)
    assert [(by[k].status, by[k].run) for k in WHERE] == [("improved", "attempt-1"), ("improved", "attempt-2")]
    assert by[WHERE[0]].error.startswith("7 -> 4 graphs"), by[WHERE[0]].error
    assert report.recommendation.graphs_after == 1


def test_a_batch_that_fails_is_split_and_says_so():
    report = nstviz.trace_code(ONE_FAILS, {}, auto=True, backend="eager", max_attempts=1)
    by = _by_name(report)
    for key in WHERE:
        c = by[key]
        assert (c.status, c.run) == ("skipped", "attempt-1"), c
        assert "(attempt-1), not kept together: compile failed: RuntimeError: ZeroDivisionError" in c.error, c.error
        assert c.error.endswith("then not tried alone: attempt limit (1) reached"), c.error
    assert report.recommendation is None


def test_gather_batches_only_when_one_attempt_each_would_not_fit_the_time_left():
    """No compile: two hand-built early rewrites at two breaks, and a deadline whose estimate is set by hand."""
    from types import SimpleNamespace

    from nstviz.advisor import batch, steps
    from nstviz.advisor.attempt import RewriteAttempt, derive
    from tests.analysis.test_advisor_logic import B_LEAF, B_STATS, Block, leaf, run
    from tests.analysis.test_advisor_steps import _planned

    state = _planned(run("baseline", B_LEAF, B_STATS))
    marks = {p.name: p for p in state.queue}
    rewrites = [
        derive(RewriteAttempt, marks[name], key=f"rewrite: {name} (branch-where)", obj=obj,
               remedy=SimpleNamespace(remedy="branch-where", config={}))
        for name, obj in (("leaf", leaf), ("Block.stats", Block.stats))
    ]
    state.queue[:0] = rewrites
    clock = state.clock
    clock.budget_s, clock.durations = 60.0, [25.0]  # 60 s: two runs of 25 s do not fit with the reserve
    clock.reserve_s = 15.0
    got = batch.gather(state, state.queue.pop(0), steps.EARLY_REWRITES)
    assert got is not None and [m.result_key for m in got.members] == [r.result_key for r in rewrites]
    assert state.queue[0].name == "Block.stats" and all(q.kind == "nonstrict" for q in state.queue)

    state.queue[:0] = rewrites
    clock.durations = [12.0]  # two runs of 12 s fit, but not two runs and their checks on other inputs
    got = batch.gather(state, state.queue.pop(0), steps.EARLY_REWRITES)
    assert got is not None and len(got.members) == 2

    state.queue[:0] = rewrites
    clock.durations = [5.0]  # two runs of 5 s and their checks fit: one at a time
    assert batch.gather(state, state.queue.pop(0), steps.EARLY_REWRITES) is None
    assert state.queue[0] is rewrites[1]
    state.unbatched.add(rewrites[1].result_key)  # one that did not hold in a batch is not batched again
    clock.durations = [25.0]
    assert batch.gather(state, rewrites[0], steps.EARLY_REWRITES) is None
