"""One check of the capture options, shared by compare/trace_code, the CLI and the magic."""

from __future__ import annotations

import dataclasses

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


def test_compare_and_trace_code_take_every_option_by_its_field_name():
    import inspect

    from nstviz._options import CaptureOptions

    fields = {f.name for f in dataclasses.fields(CaptureOptions)}
    for entry in (nstviz.compare, nstviz.trace_code):
        parameters = inspect.signature(entry).parameters
        keyword = {n for n, p in parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        assert fields <= keyword, f"{entry.__name__} lacks {fields - keyword}"  # api picks them by name


def test_flag_spelling_and_bounds_without_auto():
    with pytest.raises(UsageError, match=r"^--budget -1: the advisor's time budget"):
        check_capture_options(auto=True, backend="record", baseline="as_written", budget_s=-1, spelling="flag")
    with pytest.raises(UsageError, match="only apply with --auto"):
        check_capture_options(auto=False, backend="record", baseline="as_written", max_attempts=2, spelling="flag")
    # the API has defaults for the bounds: they are fine without auto
    check_capture_options(auto=False, backend="record", baseline="as_written", budget_s=60.0, max_attempts=8)
    check_capture_options(auto=True, backend=lambda gm, inputs: gm, baseline="strict", budget_s=float("inf"))


# -- one list of options: the CLI's and the magic's parsers are built from FLAGS ----------------


def _dests(parser):
    return {a.dest for a in parser._actions}


def test_every_front_end_has_the_flags_of_the_one_list():
    from nstviz._options import FLAGS, CaptureOptions
    from nstviz.cli.parsers import build_parsers

    parsers = build_parsers()
    fields = {f.name for f in dataclasses.fields(CaptureOptions)}
    assert {f.option for f in FLAGS} == fields  # every option has a flag, every flag an option
    for command in ("run", "check"):
        assert {f.dest for f in FLAGS} <= _dests(parsers[command])
    assert {f.dest for f in FLAGS if "record" in f.front_ends} == {"nonstrict", "backend"}
    assert {"nonstrict", "backend"} <= _dests(parsers["record"])
    pytest.importorskip("IPython")
    from nstviz.jupyter.magics import NstraceMagics

    magic = _dests(NstraceMagics.nstrace.parser)
    assert {f.dest for f in FLAGS if "magic" in f.front_ends} <= magic
    assert "show_output" not in magic  # the magic shows printed output in the view


def test_parsed_flags_give_the_api_defaults_and_the_given_values():
    from nstviz._options import CaptureOptions
    from nstviz.cli.parsers import build_parsers, parse

    run = build_parsers()["run"]
    assert CaptureOptions.from_flags(parse(run, ["s.py"])) == CaptureOptions()
    given = CaptureOptions.from_flags(
        parse(run, ["s.py", "-n", "a,b", "--nonstrict", "a", "--auto", "--budget", "5", "--no-check", "--show-output"])
    )
    assert given == CaptureOptions(nonstrict=("a", "b"), auto=True, budget_s=5.0, check=False, echo=True)
    assert given.as_kwargs()["budget_s"] == 5.0
    with pytest.raises(UsageError, match="only apply with --auto"):
        CaptureOptions.from_flags(parse(run, ["s.py", "--max-attempts", "2"]))


def test_the_plan_follows_the_options():
    pytest.importorskip("torch")
    from nstviz._options import CaptureOptions
    from nstviz.api import run_plan

    plain = CaptureOptions()
    assert run_plan(plain, "compare").eager_first and not run_plan(plain, "trace_code").eager_first
    assert run_plan(plain, "trace_code").runs_total() == 2  # baseline, nonstrict
    assert run_plan(plain, "trace_code").runs_total(baseline_raised=True) == 3  # + the eager reference
    auto = CaptureOptions(auto=True, max_attempts=3, check=False)
    assert run_plan(auto, "trace_code").runs_total() == 5  # baseline, 3 attempts, nonstrict
    assert run_plan(auto, "compare").runs_total() == 5  # no eager pair without check
