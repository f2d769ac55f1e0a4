"""The rewrites API on bad input: clear notes or errors, nothing patched."""

from __future__ import annotations

import pytest
import torch

from nstviz.advisor.rewrites import BreakSite, propose, propose_branch, verify
from tests.rewrites import toys


def test_not_a_python_function_is_a_note():
    p = propose(torch.sin, BreakSite("GB0170", message="Data-dependent branching"))
    assert p.rewrites == [] and "is not a Python function" in p.notes[0]


def test_lambda_is_a_note():
    p = propose_branch(lambda x: x, BreakSite())
    assert p.rewrites == [] and "not a plain `def`" in p.notes[0]


def test_unknown_break_tries_every_source_rewrite():
    p = propose(toys.branch_assign, BreakSite(gb_id=None, message=""))
    assert [r.remedy for r in p.rewrites] == ["branch-where", "branch-cond"]


def test_break_line_selects_the_if():
    import inspect

    _, first = inspect.getsourcelines(toys.branch_assign)
    p = propose_branch(toys.branch_assign, BreakSite("GB0170", first))  # the `def` line: no `if` there
    assert p.rewrites == []


def test_verify_needs_two_input_sets():
    r = propose_branch(toys.branch_assign, BreakSite()).rewrites[0]
    with pytest.raises(ValueError, match="at least two input sets"):
        verify(toys.branch_assign, r, [(torch.randn(2, 2),)])
    assert "where" not in toys.branch_assign.__code__.co_names


def test_none_tests_and_bare_flags_are_not_taken_for_data_branches():
    assert propose_branch(toys.optional_mask, BreakSite()).rewrites == []
    import inspect

    _, first = inspect.getsourcelines(toys.optional_mask)
    # even at the break's own line, an `is not None` test is never data-dependent
    assert propose_branch(toys.optional_mask, BreakSite("GB0170", first + 1)).rewrites == []
