"""Remedy: a data-dependent ``if`` that updates the module's state becomes ``torch.where`` selects (real compiles)."""

from __future__ import annotations

import copy
import inspect

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_check, propose_state_where
from tests.rewrites import toys_state as toys
from tests.rewrites._paste import graphs_in_fresh_process


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _brk(fn, text):
    return BreakSite("GB0170", _line(fn, text), "Data-dependent branching")


def _batches():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(4, 6, generator=g) * (i + 1) for i in range(3)]


def _graphs(model, x):
    torch._dynamo.reset()
    return torch._dynamo.explain(model)(x).graph_count


def test_the_observer_becomes_selects_and_its_assert_an_assert_async():
    p = propose(toys.RangeObserver.forward, _brk(toys.RangeObserver.forward, "self.x_min.min() > -1.1e-5"))
    assert [r.remedy for r in p.rewrites][:1] == ["state-where"], p.notes
    src = p.rewrites[0].source
    assert "_nstviz_c = (self.x_min.min() > -1.1e-05) & (self.x_max.max() < 1.1e-05)" in src
    assert "self.x_min = torch.where(_nstviz_c, x_min__t, x_min__f)" in src
    assert "        if self.momentum == -1:\n            x_min__f = torch.min(self.x_min, x_min)" in src  # stays Python
    assert ("torch._assert_async((x_max.isnan().sum() == 0) & (x_min.isnan().sum() == 0), "
            "'AssertionError: NaN detected when computing min/max')") in src


def test_training_compiles_whole_and_the_statistics_and_gradients_equal_eager():
    r = propose_state_where(toys.RangeObserver.forward, _brk(toys.RangeObserver.forward, "assert x_max")).rewrites[0]
    torch.manual_seed(0)
    eager = toys.QuantMlp().train()
    compiled_model = copy.deepcopy(eager)
    assert _graphs(copy.deepcopy(eager), _batches()[0]) == 8  # before: three breaks in each observer (the assert's `and` is two)
    with r.applied():
        assert _graphs(copy.deepcopy(eager), _batches()[0]) == 1
        torch._dynamo.reset()
        step = torch.compile(compiled_model, backend="aot_eager", fullgraph=True)
        for x in _batches():  # the first batch seeds the ranges, the next ones average
            want, got = eager(x), step(x)
            want.sum().backward()
            got.sum().backward()
            torch.testing.assert_close(got, want)
            for a, b in zip(eager.buffers(), compiled_model.buffers(), strict=True):
                torch.testing.assert_close(b, a)
    for a, b in zip(eager.parameters(), compiled_model.parameters(), strict=True):
        torch.testing.assert_close(b.grad, a.grad)
    torch._dynamo.reset()


def test_an_arm_that_leaves_an_attribute_keeps_its_value():
    r = propose_state_where(toys.PeakTracker.forward, _brk(toys.PeakTracker.forward, "level > self.peak")).rewrites[0]
    assert "self.peak = torch.where(_nstviz_c, peak__t, self.peak)" in r.source
    assert "self.count = torch.where(_nstviz_c, count__t, count__f)" in r.source
    eager, other = toys.PeakTracker(), toys.PeakTracker()
    xs = [torch.full((3,), 2.0), torch.full((3,), 1.0), torch.full((3,), 3.0)]
    with r.applied():
        step = torch.compile(other, backend="aot_eager", fullgraph=True)
        for x in xs:
            torch.testing.assert_close(step(x), eager(x))
    assert (other.peak.item(), other.count.item()) == (eager.peak.item(), eager.count.item()) == (3.0, 2.5)
    torch._dynamo.reset()


def test_an_arm_calling_a_method_of_the_instance_is_left_alone():
    p = propose_state_where(toys.LoggedTracker.forward, _brk(toys.LoggedTracker.forward, "level > self.peak"))
    assert p.rewrites == [] and not p.fits
    assert any("self.peak = self.reset(level)" in n for n in p.notes), p.notes


def test_a_failing_assert_still_raises_compiled():
    r = propose_state_where(toys.RangeObserver.forward, _brk(toys.RangeObserver.forward, "assert x_max")).rewrites[0]
    bad = torch.tensor([1.0, float("nan")])
    with pytest.raises(AssertionError):
        toys.RangeObserver()(bad)
    with r.applied():
        torch._dynamo.reset()
        with pytest.raises(RuntimeError, match="NaN detected"):
            torch.compile(toys.RangeObserver(), backend="aot_eager")(bad)
    torch._dynamo.reset()


def test_asserts_on_data_become_assert_async_and_asserts_on_sizes_stay():
    def checked(x, n):
        assert x.shape[0] == n, "rows"
        assert n % 2 == 0
        assert (x >= 0).all(), f"negative entries in {x}"
        return x * 2

    # a local def has no source file to read back: the check reads it from this file
    p = propose_check(checked, BreakSite("GB0170", None, "Data-dependent branching"))
    src = p.rewrites[0].source
    assert "torch._assert_async((x >= 0).all(), 'AssertionError: negative entries in ...')" in src
    assert "assert x.shape[0] == n, 'rows'" in src and "assert n % 2 == 0" in src


def test_paste_in_a_fresh_process():
    r = propose_state_where(toys.RangeObserver.forward, _brk(toys.RangeObserver.forward, "assert x_max")).rewrites[0]
    call = "RangeObserver().train(), (torch.randn(5),)"
    setup = "from torch import nn"
    assert graphs_in_fresh_process([toys.RangeObserver], "", call, setup) == 4
    paste = r.source + "RangeObserver.forward = forward\n"
    assert graphs_in_fresh_process([toys.RangeObserver], paste, call, setup) == 1


def test_the_advisor_keeps_the_selects_and_the_pasted_code_compiles_whole():
    import nstviz

    torch.manual_seed(0)
    model = toys.QuantMlp().train()
    report = nstviz.compare(model, _batches()[0], auto=True, backend="eager", time=False)
    kept = [c.function for c in report.candidates if c.status == "improved"]
    assert any("state-where" in k for k in kept), report.candidates
    rec = report.recommendation
    assert rec is not None and rec.graphs_after == 1, rec
    call = "toys_state.QuantMlp().train(), (torch.randn(4, 6),)"
    setup = "from tests.rewrites import toys_state"
    assert graphs_in_fresh_process([], "", call, setup) == 8
    assert graphs_in_fresh_process([], rec.code, call, setup) == 1
