"""The seed document's snippets, verbatim (issue 17): the verdict nstviz gives on each.

The seed page ("Использование torch._dynamo.nonstrict_trace") has three snippets: the breaking
code, compiled with ``fullgraph=True`` and called inside ``try: ... except Exception as e:
print(e)``; the decorator form (``@torch._dynamo.nonstrict_trace``); the call-site form
(``torch._dynamo.nonstrict_trace(get_magic_num)()``). The last two print the result ("No graph
break and no error"). Each is run as written, through ``trace_code``, the ``%%nstrace`` magic
and ``nstviz run``, and the whole verdict is checked: breaks baseline → nonstrict, the
resolved break, graphs, outputs against eager and the headline's chips.

A fullgraph failure is the same fatal break whether the code catches it or not, and a run whose
compile failed has no outputs: the nonstrict run is compared with an eager run instead.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import torch

import nstviz
from nstviz.report import Report

pytestmark = pytest.mark.usefixtures("warm_backends")

# The seed's first snippet, verbatim (the code the page says fails).
CAUGHT = """\
import torch
def get_magic_num():
    # This explicit graph break call is meant to emulate any kind of Dynamo
    # graph break, e.g., the function is implemented in C, or uses some python
    # language feature Dynamo doesn't yet support.
    torch._dynamo.graph_break()
    return torch.tensor([42])
@torch.compile(fullgraph=True)
def func(x):
    n = get_magic_num()
    return x + n
try:
    func(torch.rand(10))
except Exception as e:
    print(e)
"""

# The same with the result kept: the except branch's None is not an output of the compile.
CAUGHT_OUT = CAUGHT.replace(
    "try:\n    func(torch.rand(10))\nexcept Exception as e:\n    print(e)\n",
    "x = torch.rand(10)\ntry:\n    out = func(x)\nexcept Exception as e:\n    print(e)\n    out = None\n",
)
# Not caught: the same failure raises out of the code.
UNCAUGHT = CAUGHT.replace(
    "try:\n    func(torch.rand(10))\nexcept Exception as e:\n    print(e)\n", "x = torch.rand(10)\nout = func(x)\n"
)

# The seed's second snippet, verbatim: the decorator form.
DECORATED = """\
import torch
@torch._dynamo.nonstrict_trace
def get_magic_num():
    # This explicit graph break call is meant to emulate any kind of Dynamo
    # graph break, e.g., the function is implemented in C, or uses some python
    # language feature Dynamo doesn't yet support.
    torch._dynamo.graph_break()
    return torch.tensor([42])
@torch.compile(fullgraph=True)
def func(x):
    n = get_magic_num()
    return x + n
print(func(torch.rand(10)))
# No graph break and no error.
"""

# The seed's third snippet, verbatim: the call-site form.
CALL_SITE = """\
import torch
def get_magic_num():
    # This explicit graph break call is meant to emulate any kind of Dynamo
    # graph break, e.g., the function is implemented in C, or uses some python
    # language feature Dynamo doesn't yet support.
    torch._dynamo.graph_break()
    return torch.tensor([42])
@torch.compile(fullgraph=True)
def func(x):
    n = torch._dynamo.nonstrict_trace(get_magic_num)()
    return x + n
print(func(torch.rand(10)))
# No graph break and no error.
"""

NOT_COMPARABLE = "outputs not checked (no comparable values: the code returned or assigned nothing that can be compared)"
FIXED = [("breaks", "1 break → 0", "good"), ("graphs", "fullgraph failed → 1 graph", "good")]


def chips(report: Report) -> list[tuple[str, str, str]]:
    return [(c.kind, c.text, c.tone) for c in report.headline.chips]


def the_break(report: Report, run: str = "baseline") -> list[tuple]:
    """What the fatal break says: id, where, the user stack, how often, hints."""
    return [
        (b.gb_id, b.fatal, b.location.line, b.location.function, [(s.line, s.function) for s in b.stack],
         b.count, b.caused, b.explanation, b.hints)
        for b in report.runs[run].breaks
    ]


def seed_break(shift: int = 0, count: int = 1) -> list[tuple]:
    """The seed's fatal break; ``shift``: lines before the snippet (the ``%%nstrace`` line)."""
    return [
        ("GB0025", True, 6 + shift, "get_magic_num", [(10 + shift, "func"), (6 + shift, "get_magic_num")], count, 0,
         "User-inserted graph break. Message: None", ("Remove the `torch._dynamo.graph_break()` call.",))
    ]


SEED_BREAK = seed_break()


def assert_fixed_by_nonstrict(report: Report, lines: tuple[int, int | None]) -> None:
    """The nonstrict run: no break, one graph, get_magic_num as a region; the fatal break resolved."""
    report.validate()
    nst = report.runs["nonstrict"]
    assert nst.error is None and nst.breaks == ()
    assert [r.function for r in nst.regions] == ["get_magic_num"]
    assert (nst.regions[0].line_start, nst.regions[0].line_end) == lines
    assert (report.counts["baseline"].graphs, report.counts["nonstrict"].graphs) == (0, 1)
    assert (report.counts["baseline"].breaks, report.counts["nonstrict"].breaks) == (1, 0)
    assert [b.gb_id for b in report.diff.resolved] == ["GB0025"]
    assert not report.diff.remaining and not report.diff.introduced


# -- the caught failure ------------------------------------------------------------------------


def test_caught_seed_is_a_fatal_break_resolved_by_nonstrict():
    report = nstviz.trace_code(CAUGHT, {}, nonstrict=["get_magic_num"], filename="<seed>")
    base = report.runs["baseline"]
    assert base.error is None  # the code caught it and printed it
    assert "Call to `torch._dynamo.graph_break()`" in base.stdout
    assert the_break(report) == SEED_BREAK
    assert_fixed_by_nonstrict(report, (2, 7))
    assert report.runs["nonstrict"].stdout == ""  # nothing failed, nothing printed
    # nothing assigned: the nonstrict run is compared with eager, and there is nothing to compare
    assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [("eager", "nonstrict", None)]
    assert chips(report) == [*FIXED, ("outputs", NOT_COMPARABLE, "neutral")]


def test_caught_and_uncaught_are_the_same_break_and_verdict():
    caught = nstviz.trace_code(CAUGHT_OUT, {}, nonstrict=["get_magic_num"], filename="<seed>")
    uncaught = nstviz.trace_code(UNCAUGHT, {}, nonstrict=["get_magic_num"], filename="<seed>")
    assert caught.runs["baseline"].error is None
    assert uncaught.runs["baseline"].error_type == "Unsupported"
    assert the_break(caught) == the_break(uncaught) == SEED_BREAK
    assert caught.runs["baseline"].breaks == uncaught.runs["baseline"].breaks  # every field, stack and hints
    for report in (caught, uncaught):
        assert_fixed_by_nonstrict(report, (2, 7))
        # the baseline's `out` (None, or never set) is not an output: eager is the reference
        assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [("eager", "nonstrict", True)]
        assert chips(report) == [*FIXED, ("outputs", "outputs match eager", "good")]
        assert report.summary().splitlines()[0] == "1 break → 0, fullgraph failed → 1 graph, outputs match eager"


def test_caught_out_never_says_outputs_differ():
    ns: dict = {}
    report = nstviz.trace_code(CAUGHT_OUT, ns, nonstrict=["get_magic_num"], filename="<seed>")
    assert "DIFFER" not in report.headline.text and "missing in baseline" not in report.headline.text
    assert report.outputs.match is True
    # the namespace ends as after the nonstrict run: the compiled value, 42 added
    assert torch.equal(ns["out"], ns["x"] + 42)


def test_caught_seed_without_nonstrict_says_the_compile_failed():
    report = nstviz.trace_code(CAUGHT, {}, filename="<seed>")
    assert the_break(report) == SEED_BREAK
    assert chips(report) == [
        ("note", "nothing was marked (baseline only)", "neutral"),
        ("breaks", "1 break", "neutral"),
        ("graphs", "fullgraph failed: 0 graphs", "bad"),
        ("outputs", "outputs not checked (no second run to compare with)", "neutral"),
    ]


def test_caught_seed_through_compare_of_a_function():
    ns: dict = {}
    exec(compile(CAUGHT.split("try:")[0], "<seed-def>", "exec"), ns)

    def cell(x):
        try:
            return ns["func"](x)
        except Exception:
            return None

    report = nstviz.compare(cell, torch.ones(10), nonstrict=[ns["get_magic_num"]])
    # compare() compiles `cell` too: Dynamo gives up on that frame at the same break (the frame
    # runs eagerly), then func's fullgraph compile fails on it: one fatal break, reached twice
    stack = [(cell.__code__.co_firstlineno + 2, "cell"), (10, "func"), (6, "get_magic_num")]
    assert the_break(report) == [(*SEED_BREAK[0][:4], stack, 2, *SEED_BREAK[0][6:])]
    assert report.runs["baseline"].breaks[0].compile_ids == ("0/0", "1/0")
    assert_fixed_by_nonstrict(report, (2, None))  # exec'd source: its last line is not known
    comparisons = {(c.left, c.right): c.match for c in report.outputs.comparisons}
    assert comparisons == {("eager", "nonstrict"): True}  # the baseline's None is not compared
    assert chips(report) == [*FIXED, ("outputs", "outputs match eager", "good")]


# -- the fixed snippets: "No graph break and no error" ------------------------------------------


@pytest.mark.parametrize("source", [DECORATED, CALL_SITE], ids=["decorator", "call-site"])
def test_fixed_snippets_no_graph_break_and_no_error(source):
    report = nstviz.trace_code(source, {}, filename=f"<seed-fixed-{id(source)}>")
    base = report.runs["baseline"]
    assert list(report.runs) == ["baseline"]  # the code's own mark applies; nothing else to mark
    assert base.error is None and base.breaks == () and report.counts["baseline"].graphs == 1
    assert [r.function for r in base.regions] == ["get_magic_num"]
    assert [(m.origin, m.qualname) for m in base.marked] == [("in_source", "get_magic_num")]
    assert base.stdout.startswith("tensor([42.") and base.stdout.endswith("])\n")  # printed, no error
    assert chips(report) == [
        ("note", "nothing was marked (baseline only)", "neutral"),
        ("breaks", "0 breaks", "neutral"),
        ("graphs", "1 graph", "neutral"),
        ("outputs", "outputs not checked (no second run to compare with)", "neutral"),
    ]


@pytest.mark.parametrize(("source", "lines"), [(DECORATED, (2, 8)), (CALL_SITE, (2, 7))], ids=["decorator", "call-site"])
def test_fixed_snippets_strict_baseline_shows_what_the_mark_fixes(source, lines):
    report = nstviz.trace_code(source, {}, baseline="strict", filename=f"<seed-strict-{id(source)}>")
    brk = the_break(report)
    assert [(b[0], b[1], b[3], b[5]) for b in brk] == [("GB0025", True, "get_magic_num", 1)]
    assert brk[0][2] == (7 if source is DECORATED else 6)
    assert_fixed_by_nonstrict(report, lines)
    assert [(m.origin, m.qualname) for m in report.runs["nonstrict"].marked] == [("in_source", "get_magic_num")]
    # printed, not assigned: eager vs nonstrict has nothing to compare
    assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [("eager", "nonstrict", None)]
    assert chips(report) == [*FIXED, ("outputs", NOT_COMPARABLE, "neutral")]


# -- the same through the magic and the command ----------------------------------------------------


@pytest.fixture(scope="module")
def ip():
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "nstviz")
    return shell


def test_magic_caught_seed(ip):
    ip.run_cell_magic("nstrace", "--nonstrict get_magic_num --name seed_report --quiet", CAUGHT_OUT)
    report = ip.user_ns.pop("seed_report")
    assert the_break(report) == seed_break(shift=1)  # lines of the cell, the %%nstrace line is line 1
    assert_fixed_by_nonstrict(report, (3, 8))
    assert chips(report) == [*FIXED, ("outputs", "outputs match eager", "good")]
    assert torch.equal(ip.user_ns["out"], ip.user_ns["x"] + 42)


def test_magic_decorator_form(ip):
    ip.run_cell_magic("nstrace", "--name seed_report --quiet", DECORATED)
    report = ip.user_ns.pop("seed_report")
    assert report.runs["baseline"].breaks == () and [r.function for r in report.runs["baseline"].regions] == [
        "get_magic_num"
    ]
    assert report.headline.text.startswith("nothing was marked (baseline only), 0 breaks, 1 graph")


@pytest.mark.parametrize("source", [CAUGHT_OUT, UNCAUGHT], ids=["caught", "uncaught"])
def test_cli_run_seed_script(tmp_path: Path, source: str):
    from nstviz.cli.main import main

    script = tmp_path / "seed.py"
    script.write_text(source, encoding="utf-8")
    out_json = tmp_path / "r.json"
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", str(script), "-n", "get_magic_num", "--json", str(out_json), "-q"], stdout=out, stderr=err)
    report = Report.from_json(out_json.read_text(encoding="utf-8"))
    assert the_break(report) == SEED_BREAK
    assert report.runs["baseline"].breaks[0].location.file == str(script)
    assert_fixed_by_nonstrict(report, (2, 7))
    assert chips(report) == [*FIXED, ("outputs", "outputs match eager", "good")]
    assert json.loads(out_json.read_text(encoding="utf-8"))["headline"]["text"] == report.headline.text
    assert code == 0, err.getvalue()


# -- the same from a TORCH_TRACE log ---------------------------------------------------------------


@pytest.mark.parametrize("source", [CAUGHT, UNCAUGHT], ids=["caught", "uncaught"])
def test_torch_trace_log_of_the_seed_gives_the_same_break(tmp_path: Path, source: str):
    import os
    import subprocess
    import sys

    from nstviz.offline.ingest import find_logs, ingest_log

    script = tmp_path / "seed_job.py"
    script.write_text(source, encoding="utf-8")
    env = {**os.environ, "TORCH_TRACE": str(tmp_path / "trace")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == (0 if source is CAUGHT else 1), done.stderr[-2000:]
    (log,) = find_logs(tmp_path / "trace")
    offline = ingest_log(log)
    live = nstviz.trace_code(source, {}, filename=str(script))
    assert the_break(offline) == SEED_BREAK
    assert offline.runs["baseline"].breaks == live.runs["baseline"].breaks  # every field: same break
    counted = [("breaks", "1 break", "neutral"), ("graphs", "fullgraph failed: 0 graphs", "bad")]
    assert [c for c in chips(offline) if c[0] in ("breaks", "graphs")] == counted
    assert [c for c in chips(live) if c[0] in ("breaks", "graphs")] == counted
