"""Live timing (nstviz.capture.timing) on small real toys compiled with eager/aot_eager.

No test asserts a speed ratio (machine load varies): the figures are checked for being
measured (positive, ordered, as many as asked), the graph counts against
``torch._dynamo.explain``, and the state for being restored.
"""

from __future__ import annotations

import gc

import pytest
import torch
from torch._dynamo.testing import CompileCounter

from nstviz.capture import marking
from nstviz.capture.timing import settings_of, time_calls, time_compiled
from nstviz.errors import UsageError
from nstviz.report.timing import CallTiming, format_timing, ranked
from tests.helpers import state
from tests.helpers.snapshot import ProcessState, assert_restored

pytestmark = pytest.mark.usefixtures("warm_backends")  # torch's first-compile work before any snapshot

FAST = {"calls": 5, "warmup": 1}  # a few calls: what is checked is that they are measured


def scale_rows(h):
    """The helper Dynamo cannot trace (an explicit break standing in for unsupported code)."""
    torch._dynamo.graph_break()
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)


def toy(x):
    """Three graphs: before the break, the rest of ``scale_rows``, the rest of ``toy``."""
    return torch.relu(scale_rows(x.sin())) + 1


def two_graphs(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos()


def noisy_toy(x):
    print("a line per call")
    return (x * torch.randn_like(x)).sum()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        return scale_rows(self.proj(x)) + x


def _explain_graphs(fn, *args) -> int:
    torch._dynamo.reset()
    try:
        return torch._dynamo.explain(fn)(*args).graph_count
    finally:
        torch._dynamo.reset()


def _check_figures(t: CallTiming, calls: int | None = None) -> None:
    assert 0 < t.min_s <= t.q1_s <= t.median_s <= t.q3_s <= t.max_s
    assert t.spread_s == pytest.approx((t.q3_s - t.q1_s) / 2) and t.spread_s >= 0
    if calls is not None:
        assert t.calls == calls


def test_graph_count_is_explains_and_the_fix_has_one():
    x = torch.randn(4, 8)
    assert time_compiled(two_graphs, (x,), backend="eager", **FAST).graphs == _explain_graphs(two_graphs, x) == 2
    broken = time_compiled(toy, (x,), backend="eager", **FAST)
    assert broken.graphs == _explain_graphs(toy, x) == 3
    with marking.marked([scale_rows]):
        fixed = time_compiled(toy, (x,), backend="eager", **FAST)
        assert fixed.graphs == _explain_graphs(toy, x) == 1
    assert ranked([("baseline", broken.graphs, broken), ("nonstrict", fixed.graphs, fixed)]) == ["nonstrict", "baseline"]
    assert broken.recompiles == fixed.recompiles == 0


def test_figures_are_positive_ordered_and_as_many_as_asked():
    x = torch.randn(16, 8)
    t = time_compiled(toy, (x,), backend="aot_eager", calls=7, warmup=3)
    assert t.first_call_s > 0 and t.compile_s is not None and 0 < t.compile_s <= t.first_call_s
    assert t.steady is not None and t.eager is not None
    _check_figures(t.steady, 7)
    _check_figures(t.eager, 7)
    assert t.steady.warmup == t.eager.warmup == 3
    assert t.backend == "aot_eager" and t.budget_s is None and not t.synchronized
    assert " (median of 7), eager " in format_timing(t) and format_timing(t).endswith("; 3 graphs")


def test_a_time_budget_bounds_the_calls():
    x = torch.randn(4, 8)
    t = time_compiled(toy, (x,), backend="eager", budget_s=0.0, min_calls=3, max_calls=50)
    assert t.steady is not None and t.steady.calls == 3  # the budget is spent at once: min_calls
    t = time_compiled(toy, (x,), backend="eager", budget_s=None, min_calls=3, max_calls=4, eager=False)
    assert t.steady is not None and t.steady.calls == 4 and t.eager is None and t.budget_s is None


def test_state_is_restored_and_earlier_compiled_code_is_not_recompiled():
    x = torch.randn(4, 8)
    counter = CompileCounter()
    user_compiled = torch.compile(toy, backend=counter)
    expected = user_compiled(x)
    frames = counter.frame_count
    assert frames == 3
    gc_enabled = gc.isenabled()
    before = ProcessState.take()  # config, marks, stance, RNG, stdout, profile function, ...
    t = time_compiled(toy, (x,), backend="aot_eager", **FAST)
    assert_restored(before)
    assert gc.isenabled() == gc_enabled
    assert t.graphs == 3
    torch.testing.assert_close(user_compiled(x), expected)
    assert counter.frame_count == frames  # still its own compiled code: no recompile


def test_rng_is_restored_and_prints_are_dropped(capsys):
    x = torch.randn(4, 8)
    torch.manual_seed(123)
    before = torch.get_rng_state()
    t = time_compiled(noisy_toy, (x,), backend="eager", **FAST)
    assert torch.equal(torch.get_rng_state(), before)
    assert capsys.readouterr().out == ""
    assert t.graphs >= 1


class Boom(Exception):
    pass


def test_an_error_in_the_users_function_propagates_with_the_state_restored():
    x = torch.randn(4, 8)
    counter = CompileCounter()
    user_compiled = torch.compile(toy, backend=counter)
    user_compiled(x)
    calls = []

    def fails_on_third_call(v):
        calls.append(1)
        if len(calls) == 3:  # during warm-up: after the compile, before any measured call
            raise Boom("third call")
        return v.cos()

    def fails_at_once(v):
        raise Boom("first call")

    for fn in (fails_on_third_call, fails_at_once):
        before = ProcessState.take()
        with pytest.raises(Boom):
            time_compiled(fn, (x,), backend="eager", calls=5, warmup=2)
        assert_restored(before)
        assert gc.isenabled()
    assert len(calls) == 3
    user_compiled(x)
    assert counter.frame_count == 3


def test_recompiles_while_timing_are_counted():
    steps = {"n": 0}

    def shape_changes(v):
        steps["n"] += 1
        return v[: steps["n"] % 3 + 1].sum()  # a new slice length per call: guards fail

    t = time_compiled(shape_changes, (torch.arange(8.0),), backend="eager", calls=4, warmup=0, eager=False)
    assert t.graphs == 1
    assert t.recompiles >= 1
    assert "while timing" in format_timing(t)


def test_time_calls_reruns_observed_compiled_calls_as_one_unit():
    x, y = torch.randn(4, 8), torch.randn(2, 8)
    compiled_fn = torch.compile(toy, backend="aot_eager")
    model = Net()
    compiled_model = torch.compile(model, backend="eager")
    compiled_fn(x)
    compiled_model(x)
    settings = settings_of(compiled_fn)
    assert settings.name == "aot_eager" and settings.fullgraph is False
    assert settings_of(compiled_model).name == "eager"
    before = state.take()
    t = time_calls([(compiled_fn, (x,), {}), (compiled_fn, (x,), {}), (compiled_model, (y,), {})], **FAST)
    state.assert_same(before, state.take())
    # toy: 3 graphs, the model: 3 (its forward split by the break inside scale_rows); the
    # second call of compiled_fn reuses its graphs
    assert t.graphs == _explain_graphs(toy, x) + _explain_graphs(model, y) == 6
    assert t.recompiles == 0
    assert t.backend == "aot_eager+eager"
    assert t.steady is not None and t.eager is not None
    _check_figures(t.steady, 5)
    _check_figures(t.eager, 5)


def test_time_calls_with_a_plain_function_and_a_given_backend():
    x = torch.randn(4, 8)
    t = time_calls([(toy, (x,), {})], backend="eager", **FAST)
    assert t.graphs == 3 and t.backend == "eager"


def test_a_compiled_wrapper_given_to_time_compiled_is_timed_as_what_it_wraps():
    x = torch.randn(4, 8)
    counter = CompileCounter()
    wrapper = torch.compile(toy, backend=counter)
    t = time_compiled(wrapper, (x,), backend="eager", **FAST)
    assert t.graphs == 3 and t.backend == "eager"
    assert counter.frame_count == 0  # the wrapper's own backend never ran


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"calls": 0}, "calls must be >= 1"),
        ({"warmup": -1}, "warmup must be >= 0"),
        ({"min_calls": 5, "max_calls": 2}, "min_calls <= max_calls"),
        ({"budget_s": -1.0}, "budget_s must be >= 0"),
        ({"backend": "aot_eager", "mode": "max-autotune"}, "inductor backend only"),
        ({"backend": 3}, "backend= must be a backend name or a callable"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(kwargs, message):
    ran = []
    with pytest.raises(UsageError, match=message):
        time_compiled(lambda v: ran.append(v), (torch.ones(1),), **kwargs)
    assert ran == []


def test_time_calls_needs_calls():
    with pytest.raises(UsageError, match="at least one observed"):
        time_calls([])
    with pytest.raises(UsageError, match="must be callable"):
        time_calls([(3, (), {})])


def test_observed_compiled_calls_are_the_outermost_ones_and_time_as_a_cell():
    import sys

    from nstviz.capture.timing import observing_compiled_calls

    x = torch.randn(4, 8)
    compiled_fn = torch.compile(two_graphs, backend="aot_eager")
    doubled = torch.compile(lambda v: v * 2, backend="eager")

    def outer(v):
        return doubled(v) + 1  # a compiled call inside a compiled call: part of the outer one

    compiled_outer = torch.compile(outer, backend="eager")
    compiled_model = torch.compile(Net(), backend="eager")
    with observing_compiled_calls() as seen:
        compiled_fn(x)
        compiled_outer(x)
        compiled_fn(x)
        compiled_model(x)
        two_graphs(x)  # not compiled: not observed
    assert sys.getprofile() is None
    assert seen.note is None
    assert len(seen) == 4
    assert seen[0].original is two_graphs and seen[2].original is two_graphs and seen[1].original is outer
    assert seen[0].args[0] is x
    before = state.take()
    t = time_calls(seen, **FAST)
    state.assert_same(before, state.take())
    # two_graphs: 2 (its second call reuses them), outer: 1 (doubled inlined), Net: 3
    assert t.graphs == 2 + 1 + 3
    assert t.backend == "aot_eager+eager"


def test_observing_stands_aside_for_another_profiler():
    import sys

    from nstviz.capture.timing import observing_compiled_calls

    def other(frame, event, arg):
        return None

    compiled_fn = torch.compile(two_graphs, backend="eager")
    sys.setprofile(other)
    try:
        with observing_compiled_calls() as seen:
            compiled_fn(torch.ones(2))
        assert sys.getprofile() is other
    finally:
        sys.setprofile(None)
    assert list(seen) == [] and "another profiler" in (seen.note or "")


def test_a_compiled_call_that_raises_ends_its_observation():
    from nstviz.capture.timing import observing_compiled_calls

    def bad(v):
        raise Boom("in the cell")

    compiled_bad = torch.compile(bad, backend="eager")
    compiled_ok = torch.compile(two_graphs, backend="eager")
    with observing_compiled_calls() as seen:
        with pytest.raises(Boom):
            compiled_bad(torch.ones(2))
        compiled_ok(torch.ones(2))  # outermost again: listed
    assert [c.original for c in seen] == [bad, two_graphs]
    with pytest.raises(Boom):
        time_calls(seen, **FAST)  # the re-run raises as the cell did
