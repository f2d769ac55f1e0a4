"""Hostile strings, and a Report that carries one in every kind of user-derived field."""

from __future__ import annotations

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
    return Report(
        torch_version="2.13.0", runs={"baseline": run}, title=text, nonstrict=(text,), notes=(text,)
    )
