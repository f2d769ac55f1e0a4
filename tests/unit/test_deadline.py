"""The advisor's one deadline (nstviz.capture.deadline): what fits, why not, what was left untried.

The clock is the module's own ``time.monotonic``, replaced by a list the tests advance (no sleeping).
"""

from __future__ import annotations

import types

import pytest

from nstviz.capture import deadline as deadline_module
from nstviz.capture.deadline import Deadline


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(deadline_module, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def test_a_step_fits_only_with_the_final_runs_reserve_kept(clock):
    d = Deadline.starting_now(10.0, first_estimate=2.0, reserve_s=3.0)
    assert d.allows()  # 0 + 2 + 3 <= 10
    clock[0] += 5.0
    assert d.allows()  # 5 + 2 + 3 <= 10
    clock[0] += 0.5
    assert not d.allows()  # 5.5 + 2 + 3 > 10: the final run would overrun
    assert d.why_not() == "time budget (10 s): 4.5 s left, shorter than one run (~2.0 s) and the final run (~3.0 s)"
    d.reserve_s = 0.0  # the search is over: the reserve is the final run's
    assert d.allows() and not d.allows(cost=5.0)


def test_the_estimate_is_the_longest_attempt_so_far(clock):
    d = Deadline.starting_now(10.0, first_estimate=1.0)
    d.durations += [0.5, 4.0, 2.0]
    assert d.estimate() == 4.0
    clock[0] += 6.5
    assert not d.allows()
    assert d.why_not() == "time budget (10 s): 3.5 s left, shorter than one run (~4.0 s)"
    clock[0] += 4.0
    assert d.why_not() == "time budget (10 s) used up after 10.5 s"


def test_the_summary_names_what_was_left_untried_once_each(clock):
    d = Deadline.starting_now(3.0, first_estimate=1.0)
    assert d.summary() is None
    clock[0] += 2.25
    d.leave("helper")
    clock[0] += 1.0
    d.leave("helper")
    d.leave("a rewrite's check on other inputs")
    assert d.untried == ["helper", "a rewrite's check on other inputs"]
    assert d.summary() == (
        "time budget (3 s) ran out after 2.2 s; left untried: helper, a rewrite's check on other inputs"
    )
    for i in range(10):
        d.leave(f"f{i}")
    assert d.summary().endswith(", f5 and 4 more")


def test_the_default_budget_is_60_s_or_six_runs_and_says_so(clock):
    from nstviz._options import default_budget_s

    assert default_budget_s(3.0) == 60.0  # a short run: the flat 60 s
    assert default_budget_s(10.0) == 60.0
    # an object detector with its loss: an attempt, its check, the final run, the last check
    assert default_budget_s(27.4) == 164.0
    d = Deadline.starting_now(164.0, first_estimate=27.4, reserve_s=30.0, basis="the default: 6 runs of 27.4 s")
    clock[0] += 117.0
    assert d.why_not().startswith("time budget (164 s, the default: 6 runs of 27.4 s): 47.0 s left")
    d.leave("helper")
    assert d.summary() == "time budget (164 s, the default: 6 runs of 27.4 s) ran out after 117.0 s; left untried: helper"


def test_once_attempts_have_run_the_final_run_is_expected_to_cost_what_they_cost(clock):
    # Grounding DINO: the baseline's run (the first, with one-time costs) took 35.5 s, the attempts
    # 28-15 s as breaks went, the final run 18.6 s; its timing ~0.5 s follows it
    d = Deadline.for_advisor(None, 35.5, after_run_s=0.5)
    assert (d.budget_s, d.reserve()) == (213.0, 36.0)  # nothing ran yet: the baseline's run
    d.durations += [28.3, 26.0, 28.0, 15.4]
    assert d.reserve() == pytest.approx(27.5)  # their median, and the timing
    clock[0] += 155.4  # 57.6 s left: the check of the last attempt (~28.3 s) fits with the final run now
    assert d.allows()
    clock[0] += 5.0
    assert not d.allows() and d.why_not().endswith("shorter than one run (~28.3 s) and the final run (~27.5 s)")
    d.durations[:] = [60.0]  # never more than the first estimate
    assert d.reserve() == 36.0
    d.reserve_s = 0.0  # the search is over
    assert d.reserve() == 0.0


def test_room_is_kept_for_the_last_check_until_the_search_ends(clock):
    # Mistral 3: a 7.5 s run as written, 12 s attempts; the last check compiles once (~ one run)
    d = Deadline.for_advisor(60.0, 7.5, check_compiles=1)
    d.durations += [12.5, 10.8, 11.3]
    assert d.reserve() == pytest.approx(7.5 + 7.5)  # the final run (capped at the baseline's) and the check
    clock[0] += 34.7  # 25.3 s left: an attempt (~12.5 s) would leave no room for both
    assert not d.allows()
    assert d.why_not().endswith("shorter than one run (~12.5 s) and the final run (~7.5 s) and the last check (~7.5 s)")
    d.release_check()  # the search is over: the check may spend its room
    assert d.allows(d.check_cost()) and d.check_cost() == 7.5
    assert d.reserve() == pytest.approx(7.5)


def test_a_check_that_repeats_the_last_attempt_is_expected_to_cost_what_it_cost(clock):
    d = Deadline.starting_now(100.0, first_estimate=30.0)
    assert d.last_attempt() == 30.0  # no attempt yet: the estimate
    d.durations += [27.1, 25.0, 26.0, 9.5]  # the last attempt took the model to one graph
    assert (d.estimate(), d.last_attempt()) == (27.1, 9.5)
    clock[0] += 80.0  # 20 s left: a new attempt (~27.1 s) does not fit, the last one's check (~9.5 s) does
    assert not d.allows() and d.allows(d.last_attempt())
