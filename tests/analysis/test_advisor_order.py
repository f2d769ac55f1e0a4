"""Golden: the advisor's attempts, in order, and what it recommends, on one real model.

Pins the search's behaviour (tests/analysis/_order_toys.py: a config flag, marks, an adapter
and a pytree registration) so that a refactor of the loop keeps every attempt and the choice.
"""

import torch

import nstviz
from tests.analysis import _order_toys as T


def test_the_attempts_come_in_one_order_and_the_same_set_is_recommended():
    report = nstviz.compare(T.model, torch.arange(8.0).reshape(2, 4) / 8, auto=True, budget_s=300, max_attempts=10)
    tried = sorted((c for c in report.candidates if c.run), key=lambda c: int(c.run.removeprefix("attempt-")))
    assert [(c.run, c.kind, c.function, c.status) for c in tried] == [
        ("attempt-1", "config", "config: capture_scalar_outputs=True", "improved"),
        ("attempt-2", "nonstrict", "noisy", "improved"),
        ("attempt-3", "nonstrict", "shift_and_break", "failed"),
        ("attempt-4", "nonstrict", "use_box", "failed"),
        ("attempt-5", "adapter", "adapter: shift_and_break", "no_change"),
        ("attempt-6", "pytree", "pytree: tests.analysis._order_toys.Box", "improved"),
    ]
    untried = [(c.kind, c.function, c.status) for c in report.candidates if not c.run]
    assert untried == [("nonstrict", "data_dependent", "skipped")]
    rec = report.recommendation
    assert rec is not None
    assert (rec.functions, rec.adapters, rec.pytree, rec.config) == (
        ("noisy", "use_box"), (), ("tests.analysis._order_toys.Box",), ("capture_scalar_outputs",),
    )
    assert (rec.graphs_before, rec.graphs_after) == (6, 2)
