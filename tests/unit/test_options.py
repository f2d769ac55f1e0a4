"""One check of the capture options, shared by compare/trace_code, the CLI and the magic."""

from __future__ import annotations

import pytest

import nstviz
from nstviz._options import check_capture_options
from nstviz.errors import UsageError


def _double(x):
    return x * 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget_s": -1}, r"budget_s=-1: the advisor's time budget must be a positive number of seconds"),
        ({"budget_s": 0}, r"budget_s=0: the advisor's time budget"),
        ({"budget_s": float("nan")}, r"budget_s=nan: the advisor's time budget"),
        ({"budget_s": "5"}, r"budget_s='5': the advisor's time budget"),
        ({"max_attempts": 0}, r"max_attempts=0: must be a whole number, at least 1"),
        ({"max_attempts": 2.5}, r"max_attempts=2.5: must be a whole number"),
        ({"baseline": "lenient"}, r"baseline='lenient': baseline must be 'as_written' or 'strict'"),
        ({"backend": ""}, r"backend='': backend must be a backend name"),
    ],
)
def test_compare_refuses_bad_options_before_running(kwargs, message):
    with pytest.raises(UsageError, match=message):
        nstviz.compare(_double, 1, **kwargs)
    with pytest.raises(UsageError, match=message):
        nstviz.trace_code("y = 1\n", {}, **kwargs)


def test_flag_spelling_and_bounds_without_auto():
    with pytest.raises(UsageError, match=r"^--budget -1: the advisor's time budget"):
        check_capture_options(auto=True, backend="record", baseline="as_written", budget_s=-1, spelling="flag")
    with pytest.raises(UsageError, match="only apply with --auto"):
        check_capture_options(auto=False, backend="record", baseline="as_written", max_attempts=2, spelling="flag")
    # the API has defaults for the bounds: they are fine without auto
    check_capture_options(auto=False, backend="record", baseline="as_written", budget_s=60.0, max_attempts=8)
    check_capture_options(auto=True, backend=lambda gm, inputs: gm, baseline="strict", budget_s=float("inf"))
