"""RunCount: the one object that knows the runs done and the total they go to."""

from nstviz.capture.plan import RunCount, RunPlan


def test_the_total_follows_the_plan_and_what_is_known_so_far():
    count = RunCount()
    assert (count.done, count.total) == (0, 0)  # before the capture starts
    count.start(RunPlan(eager_if_baseline_raises=True, advisor_attempts=4))
    assert count.total == 6  # baseline, 4 attempts, nonstrict
    count.run_done()
    count.baseline_done(raised=True)
    assert count.total == 7  # + the eager reference
    count.run_done()
    count.attempt_starting()
    count.run_done()
    assert (count.done, count.total) == (3, 7)
    count.advisor_done(1)
    assert count.total == 4  # eager, baseline, 1 attempt, nonstrict
    count.skip_nonstrict()
    assert (count.done, count.total) == (3, 3)


def test_attempts_past_the_planned_total_raise_it_to_this_attempt_and_the_nonstrict_run():
    count = RunCount()
    count.start(RunPlan(advisor_attempts=1))
    assert count.total == 3
    for _ in range(3):  # baseline, and attempts the plan did not count (config flags)
        count.attempt_starting()
        count.run_done()
    assert count.total == 4  # the third attempt (done: 2 before it) and the nonstrict run
    count.advisor_done(2)
    assert count.total == 4


def test_a_skipped_nonstrict_run_never_leaves_the_total_below_the_runs_done():
    count = RunCount()
    count.start(RunPlan())
    count.run_done()
    count.skip_nonstrict()
    assert (count.done, count.total) == (1, 1)
