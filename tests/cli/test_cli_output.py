"""The CLI's terminal output pieces: the progress display and the summary table."""

from __future__ import annotations

import io

from nstviz.cli.commands import check_failures
from nstviz.cli.terminal import Progress, summary_table
from nstviz.passes.assemble import build_report
from nstviz.report import Break, BreakDiff, Location, MarkedFunction, OutputCheck, OutputDetail, Report, Run


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_rewrites_one_line():
    stream = FakeTty()
    with Progress(stream) as progress:
        progress({"phase": "baseline", "message": "running the code as written", "elapsed_s": 0.1})
        progress({"phase": "attempt-2", "message": "trying helper"})
    text = stream.getvalue()
    assert "\r\x1b[Knstviz: baseline run (code as written): running the code as written [0 s]" in text
    assert "advisor attempt 2: trying helper" in text
    assert "\n" not in text  # one line, redrawn, and cleared at the end
    assert text.endswith("\r\x1b[K")


def test_progress_elsewhere_prints_lines_and_quiet_prints_nothing():
    stream = io.StringIO()
    with Progress(stream) as progress:
        progress("nonstrict", "running with helper traced non-strictly")
    assert stream.getvalue().startswith("nstviz: nonstrict run: running with helper traced non-strictly [")
    assert stream.getvalue().endswith(" s]\n")
    quiet = io.StringIO()
    with Progress(quiet, quiet=True) as progress:
        progress({"phase": "baseline", "message": "x"})
    assert quiet.getvalue() == ""


def _report(**kw) -> Report:
    loc = Location(file="/x/train.py", line=7, function="helper", code="torch._dynamo.graph_break()")
    brk = Break(
        gb_id="GB0025", reason="Call to `torch._dynamo.graph_break()`", count=3, fatal=False, location=loc, caused=2
    )
    marks = (MarkedFunction(spec="helper", qualname="helper", applied=False),)
    runs = {
        "baseline": Run(name="baseline", breaks=(brk,)),
        "nonstrict": Run(name="nonstrict", breaks=(brk,), marked=marks),
    }
    defaults = {
        "torch_version": "2.13.0",
        "runs": runs,
        "diff": BreakDiff(remaining=(brk,)),
        "outputs": OutputCheck(
            match=False,
            max_abs_diff=0.5,
            details=(
                OutputDetail(path="y", match=False, max_abs_diff=0.5),
                OutputDetail(path="z", match=True),
            ),
        ),
    }
    defaults.update(kw)
    return build_report(**defaults)


def test_summary_table_lines_up_the_runs_and_explains():
    text = summary_table(_report())
    headline, header, *rows = text.splitlines()
    assert headline == "1 break → 1, 0 graphs → 0, outputs DIFFER (max |Δ| 0.5)"  # the Report's, as is
    assert header.split() == ["baseline", "nonstrict"]
    assert rows[1].split() == ["distinct", "breaks", "1", "1"]
    assert rows[2].split() == ["graph", "breaks", "2", "2"]  # Dynamo's counter: the sum of caused
    assert rows[3].split() == ["breaks", "reached", "3", "3"]
    assert len({len(r) for r in rows[:9]}) == 1  # a real table: every row the same width
    assert (
        "  remaining  GB0025  /x/train.py:7 helper  Call to `torch._dynamo.graph_break()` "
        "(caused 2 graph breaks, reached 3×)"
    ) in text
    assert "\noutputs DIFFER (max |Δ| 0.5)\n  y: max abs diff 0.5" in text  # the headline's verdict, then why
    assert "warning: --nonstrict helper (helper) never applied in the nonstrict run" in text


def test_check_failures_lists_every_reason():
    failures = check_failures(_report(), fail_on_break=True)
    assert failures == [
        "outputs differ between the baseline and nonstrict runs",
        "--nonstrict helper never applied (no call went through nonstrict_trace)",
        "1 distinct break(s) remain in the nonstrict run (--fail-on-break)",
    ]
    assert check_failures(_report(outputs=OutputCheck(match=True)), fail_on_break=False) == [
        "--nonstrict helper never applied (no call went through nonstrict_trace)"
    ]
