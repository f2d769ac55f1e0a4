"""Advice kept with a break that nonstrict_trace did not remove (a call into C/builtin code)."""

from __future__ import annotations

from nstviz.passes.break_advice import advice_for, is_c_function_break, with_advice
from nstviz.report import Break, Location, Run

CRC = Break(
    gb_id="GB0007", reason="Attempted to call function marked as skipped", count=1, fatal=False,
    location=Location(file="demo.py", line=53, function="get_magic_num", code='zlib.crc32(b"nstviz") % 97'),
)
PLAIN = Break(gb_id="GB0025", reason="Call to `torch._dynamo.graph_break()`", count=1, fatal=False,
              location=Location(file="demo.py", line=24, function="rms_scale"))
BUILTIN_TEXT = Break(gb_id=None, reason="r", gb_type="Failed to trace builtin operator", count=1, fatal=False,
                     location=Location(file="a.py", line=3, function="g"))


def test_c_function_breaks_are_told_apart_from_others():
    assert [is_c_function_break(b) for b in (CRC, PLAIN, BUILTIN_TEXT)] == [True, False, True]
    assert advice_for(PLAIN) is None
    text = advice_for(CRC)
    assert text.startswith('a call into C/builtin code (`zlib.crc32(b"nstviz") % 97`): Dynamo cannot trace it')
    assert "torch.library.custom_op" in text and "torch._dynamo.substitute_in_graph" in text


def test_advice_only_on_breaks_that_remain():
    base = Run(name="baseline", breaks=(CRC, PLAIN))
    still = with_advice({"baseline": base, "nonstrict": Run(name="nonstrict", breaks=(CRC,))})
    assert [b.advice is not None for b in still["baseline"].breaks] == [True, False]
    assert still["nonstrict"].breaks[0].advice == advice_for(CRC)
    gone = with_advice({"baseline": base, "nonstrict": Run(name="nonstrict", breaks=(PLAIN,))})
    assert [b.advice for b in gone["baseline"].breaks] == [None, None]
    alone = with_advice({"baseline": base})  # no nonstrict run: the baseline's breaks remain
    assert alone["baseline"].breaks[0].advice == advice_for(CRC)


def test_cli_table_says_it_under_the_remaining_break_only():
    from nstviz.cli.terminal import summary_table
    from nstviz.passes.assemble import build_report

    report = build_report(torch_version="x", runs={
        "baseline": Run(name="baseline", breaks=(CRC, PLAIN)), "nonstrict": Run(name="nonstrict", breaks=(CRC,))})
    lines = summary_table(report).splitlines()
    at = [i for i, line in enumerate(lines) if line.strip().startswith(("remaining", "resolved"))]
    assert [lines[i].split()[0] for i in at] == ["resolved", "remaining"]
    assert lines[at[1] + 1].startswith("    what else: a call into C/builtin code (`zlib.crc32")
    assert sum("what else:" in line for line in lines) == 1
