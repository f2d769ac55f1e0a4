"""The demo's zlib.crc32 break, with and without the mark that removes it (a real capture)."""

from __future__ import annotations

import pytest

import nstviz
from nstviz.examples import DEMO_SCRIPT

pytestmark = pytest.mark.usefixtures("warm_backends")


def _demo(nonstrict: list[str]):
    with open(DEMO_SCRIPT, encoding="utf-8") as fh:
        src = fh.read()
    return nstviz.trace_code(src, {"__name__": "__main__"}, nonstrict=nonstrict, filename=str(DEMO_SCRIPT))


def test_remaining_c_function_break_carries_the_other_ways_and_summary_says_them():
    report = _demo(["rms_scale"])
    crc = [b for b in report.runs["nonstrict"].breaks if b.location.function == "get_magic_num"]
    assert [b.gb_id for b in crc] == ["GB0007"]
    assert crc[0].advice.startswith("a call into C/builtin code (`return torch.tensor([float(zlib.crc32(")
    assert "what else: a call into C/builtin code" in report.summary()
    assert [(b.location.function, b.advice is not None) for b in report.runs["nonstrict"].breaks] == [("get_magic_num", True)]
    # the baseline's rms_scale break (a graph_break() call, removed by the mark) gets none
    assert [(b.location.function, b.advice is not None) for b in report.runs["baseline"].breaks] == [
        ("rms_scale", False), ("get_magic_num", True)]


def test_no_advice_once_the_mark_removes_it():
    report = _demo(["rms_scale", "get_magic_num"])
    assert all(b.advice is None for run in report.runs.values() for b in run.breaks)
    assert "what else:" not in report.summary()
