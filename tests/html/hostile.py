"""Hostile strings, and a Report that carries one in every kind of user-derived field."""

from __future__ import annotations

import re

from hypothesis import strategies as st

from nstviz.passes.assemble import build_report
from nstviz.report import Break, Graph, Location, Node, Report, Run

HOSTILE = [
    "</script><script>alert(1)</script>",
    "</SCRIPT >",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
    "<!--",
    "<!-- <script>",
    "]]>",
    "\u2028\u2029",
    "\ud800",
    "\udfff lone low",
    "a\x00b",
    "&lt;&amp;",
    "x" * 100_000,
]


def report_with(text: str) -> Report:
    loc = Location(file=text, line=3, function=text, code=text)
    node = Node(name="add", op="call_function", target=text, value=text, extra={text: text})
    brk = Break(gb_id=None, reason=text, count=1, fatal=False, location=loc, detail=text, hints=(text,))
    run = Run(
        name="baseline",
        graphs=(Graph(id="0/0:dynamo", level="dynamo", frame_id=0, compile_id=0, nodes=(node,)),),
        breaks=(brk,),
        stdout=text,
        error=text,
    )
    return build_report(
        torch_version="2.13.0", runs={"baseline": run}, title=text, nonstrict=(text,), notes=(text,)
    )


# Any code point, lone surrogates included, except a high surrogate followed by a low one:
# JSON (and JS) read such a pair as one astral character, so it cannot round-trip as two.
_TRICKY = [*"<>&/!-[]()=:;\"'\\ \n\t\x00scriptSCRIPTstyle", "\u2028", "\u2029", "\ud800", "\udfff", "\ufeff"]
any_text = st.one_of(
    st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None)),
    st.text(st.sampled_from(_TRICKY), max_size=60),
).filter(lambda s: re.search("[\ud800-\udbff][\udc00-\udfff]", s) is None)
