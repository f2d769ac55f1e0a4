"""The advisor's search steps (plan, next attempt, record, choose), each driven alone on a hand-built state.

No compile: the runs are hand-built (tests/analysis/test_advisor_logic.py's helpers) and the
trials are plain callables; the whole loop on the same runs is tested there.
"""

from dataclasses import replace

from nstviz.advisor import steps
from nstviz.advisor.search import _Callbacks
from nstviz.capture.remedy import Remedy, rewrites_in, split_remedies
from nstviz.report import Break
from tests.analysis.test_advisor_logic import B_LEAF, B_STATS, MATCH, Table, leaf, loc, middle, resolve, run


def _trials(table=None, **members):
    return _Callbacks(resolve, table or Table({}, ((B_LEAF, B_STATS), MATCH)), **members)


def _planned(base, trials=None, max_attempts=10):
    return steps.plan(base, trials or _trials(), budget_s=60, max_attempts=max_attempts)


def test_plan_queues_the_candidates_innermost_first_and_nothing_is_tried_yet():
    state = _planned(run("baseline", B_LEAF, B_STATS))
    assert [p.name for p in state.queue] == ["Block.stats", "leaf", "middle"]
    assert state.order == ["Block.stats", "leaf", "middle"]
    assert {c.status for c in state.results.values()} == {"skipped"} and all(c.run is None for c in state.results.values())
    assert state.current is state.baseline and state.kept == [] and not state.early_config  # no try_config given
    assert _planned(run("baseline", B_LEAF), _trials(try_config=lambda *a: None)).early_config


def test_next_attempt_passes_over_what_is_not_needed_and_stops_at_the_attempt_limit():
    state = _planned(run("baseline", B_LEAF, B_STATS), max_attempts=1)
    state.resolved.add(B_STATS.id)  # a kept attempt removed the Block.stats break
    first = steps.next_attempt(state)
    assert first is not None and first.name == "leaf"
    assert state.results["Block.stats"].error == "not needed: the marks kept already remove its breaks"
    state.clock.attempts = 1
    assert steps.next_attempt(state) is None
    assert (state.results["middle"].status, state.results["middle"].error) == ("skipped", "attempt limit (1) reached")


def test_record_keeps_an_improvement_and_the_run_it_gave_becomes_the_current_one():
    state = _planned(run("baseline", B_LEAF, B_STATS))
    p = next(q for q in state.queue if q.name == "leaf")
    tried = steps.Tried("attempt-1", (leaf,), run("attempt-1", B_STATS), MATCH)
    state.clock.durations.append(0.5)
    steps.record(state, p, tried)
    assert state.kept == [p] and state.current is tried.run and state.last_check is MATCH
    assert state.resolved == {B_LEAF.id}
    assert state.confirmed.run is tried.run and state.verified == [state.confirmed]
    got = state.results["leaf"]
    assert (got.status, got.run, got.breaks_before, got.breaks_after) == ("improved", "attempt-1", 2, 1)


def test_record_retries_a_mark_refused_for_none_inputs_through_an_adapter():
    refused = Break(
        gb_id="GB0236", reason="Invalid input type for nonstrict_trace-ed function (it got NoneType)", count=1,
        fatal=False, location=loc(middle),
    )
    state = _planned(run("baseline", B_LEAF), _trials(adapt=lambda *a: "an adapter"))
    p = next(q for q in state.queue if q.name == "leaf")
    state.clock.durations.append(0.5)
    steps.record(state, p, steps.Tried("attempt-1", (leaf,), run("attempt-1", B_LEAF, refused), MATCH))
    assert state.results["leaf"].status == "failed" and state.kept == []
    assert [(q.kind, q.key) for q in state.deferred] == [("adapter", "adapter: leaf")]
    assert state.order[-1] == "adapter: leaf" and state.results["adapter: leaf"].status == "skipped"


def test_choose_drops_attempts_still_on_trial_and_recommends_nothing_without_a_kept_set():
    state = _planned(run("baseline", B_LEAF))
    p = next(q for q in state.queue if q.name == "leaf")
    state.kept, state.on_trial = [p], ["leaf"]
    state.results["leaf"] = replace(state.results["leaf"], status="no_change", error="the fatal break moved on")
    advice = steps.choose(state)
    assert advice.recommendation is None and state.kept == []
    assert advice.candidates[0].error == "the fatal break moved on; not kept: no later attempt made it compile"


def test_choose_recommends_the_verified_set():
    state = _planned(run("baseline", B_LEAF, B_STATS))
    p = next(q for q in state.queue if q.name == "leaf")
    state.clock.durations.append(0.5)
    steps.record(state, p, steps.Tried("attempt-1", (leaf,), run("attempt-1", B_STATS), MATCH))
    advice = steps.choose(state)
    rec = advice.recommendation
    assert rec is not None and rec.functions == ("leaf",) and (rec.graphs_before, rec.graphs_after) == (3, 2)
    assert advice.functions == (("leaf", leaf),)


class _Rewrite(Remedy):
    """A rewrite as the capture sees it: it says so by subclassing Remedy."""

    source = "def leaf(x): ..."

    def applied(self):
        raise AssertionError("not applied here")


def test_a_rewrite_is_told_from_functions_by_the_remedy_protocol():
    rewrite = _Rewrite()
    assert isinstance(rewrite, Remedy) and not isinstance(leaf, Remedy)
    assert split_remedies([leaf, rewrite]) == ((leaf,), [], [])
    assert rewrites_in([leaf, rewrite]) == [rewrite]


def test_each_kind_of_attempt_is_its_own_class_derived_from_the_proposal():
    from nstviz.advisor.attempt import AdapterAttempt, MarkAttempt, PytreeAttempt, derive

    mark = MarkAttempt(name="leaf", frame=loc(leaf), breaks=[B_LEAF.id], obj=leaf)
    adapter = derive(AdapterAttempt, mark, key="adapter: leaf", replaces=mark)
    assert (adapter.kind, adapter.name, adapter.breaks, adapter.obj) == ("adapter", "leaf", [B_LEAF.id], leaf)
    assert adapter.replaced is mark and adapter.through_adapter and mark.replaced is None
    pytree = derive(PytreeAttempt, adapter, key="pytree: Box", via_adapter=True)
    assert pytree.kind == "pytree" and pytree.through_adapter and pytree.replaced is None
