"""The bad-input matrix: every case gets a specific, actionable message, and leaves no trace.

Each case goes through the Python API (``trace_code`` / ``compare``) and, where it applies,
through ``%%nstrace``; the process state is compared before and after every one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest
import torch
from IPython.utils.capture import capture_output

import nstviz
from nstviz.errors import (
    NameResolutionError,
    NothingCompiledError,
    NotMarkableError,
    UnsupportedTorchError,
    UsageError,
)
from nstviz.report import Report
from tests.helpers.snapshot import ProcessState, assert_restored
from tests.reliability import programs

CLASSES = """
class Block:
    def stats(self, x):
        return x.mean()

class Other:
    def stats(self, x):
        return x.std()
"""

INNER_CELL = """
@torch.compile
def g(x):
    inner = lambda y: y * 2
    def closure(y):
        torch._dynamo.graph_break()
        return y + x
    return inner(x) + closure(x)

r = g(torch.ones(3))
"""

NON_PYTREE_CELL = """
class Box:
    def __init__(self, t):
        self.t = t

def helper(b):
    torch._dynamo.graph_break()
    return Box(b.t * 2)

@torch.compile
def g(x):
    return helper(Box(x)).t + 1

r = g(torch.ones(3))
"""

RECURSIVE_CELL = """
def fact(x, n):
    if n == 0:
        return x
    return fact(x * 2, n - 1)

@torch.compile
def g(x):
    return fact(x, 5)

r = g(torch.ones(3))
"""

INFINITE_RECURSION_CELL = """
def down(x):
    return down(x + 1)

@torch.compile
def g(x):
    return down(x)

r = g(torch.ones(3))
"""

GENERATOR_CELL = """
def gen(x):
    for i in range(3):
        yield x * i

@torch.compile
def g(x):
    return sum(gen(x))

r = g(torch.ones(3))
"""

METHOD_CELL = """
class M(torch.nn.Module):
    def helper(self, x):
        torch._dynamo.graph_break()
        return x * 2

    def forward(self, x):
        return self.helper(x) + 1

class K:
    @torch.compile
    def run(self, x):
        return self.helper(x) + 1

    def helper(self, x):
        torch._dynamo.graph_break()
        return x * 2

m = M()
m.forward = torch.compile(m.forward)
r = m(torch.ones(3))
r2 = K().run(torch.ones(3))
"""


def _ns(extra: str = "") -> dict[str, Any]:
    ns = programs.seed_namespace()
    ns["__name__"] = "__main__"  # as in a notebook or script: classes then belong to the user
    ns["math"] = math
    if extra:
        exec(compile(extra, "<defs>", "exec"), ns)
    return ns


def _code(cell: str) -> Callable[..., Report]:
    def call(**kwargs: Any) -> Report:
        return nstviz.trace_code(cell, _ns(CLASSES), **kwargs)

    return call


SEED = _code(programs.SEED_CELL)

# (case, call, expected exception or None, regex the message or a Report note/error must match)
API_CASES: list[tuple[str, Callable[[], Any], type[BaseException] | None, str]] = [
    ("unknown name", lambda: SEED(nonstrict=["nope"]), NameResolutionError, r"'nope' is not defined.*pass the function itself"),
    ("unknown attribute", lambda: SEED(nonstrict=["Block.nope"]), NameResolutionError, r"Block \(type\) has no attribute 'nope'"),
    ("ambiguous name", lambda: SEED(nonstrict=["stats"]), NameResolutionError, r"ambiguous.*Block\.stats, Other\.stats"),
    ("builtin function", lambda: SEED(nonstrict=[math.sqrt]), NotMarkableError, r"builtin or C function.*wrap the call"),
    ("builtin by name", lambda: SEED(nonstrict=["math.sqrt"]), NotMarkableError, r"'math\.sqrt' is a builtin or C function"),
    ("torch C function", lambda: SEED(nonstrict=[torch.sin]), NotMarkableError, r"builtin or C function"),
    ("a class", lambda: SEED(nonstrict=["Block"]), NotMarkableError, r"is a class \(Block\), not a function; mark one of its methods"),
    # torch.compile's wrapper given: the function it wraps is marked, as @torch.compile over @nonstrict_trace does
    ("already compiled", lambda: SEED(nonstrict=[torch.compile(programs.helper)]), None, r"wrapped by torch\.compile: the function torch\.compile compiles is marked"),
    ("not a callable", lambda: SEED(nonstrict=[3]), NameResolutionError, r"takes function names or callables, got int"),
    ("empty name", lambda: SEED(nonstrict=[""]), NameResolutionError, r"empty name"),
    ("lambda inside the compiled fn", lambda: nstviz.trace_code(INNER_CELL, _ns(), nonstrict=["inner"]), NotMarkableError, r"'inner' is defined inside 'g'.*move it to module level"),
    ("closure inside the compiled fn", lambda: nstviz.trace_code(INNER_CELL, _ns(), nonstrict=["closure"]), NotMarkableError, r"'closure' is defined inside 'g'"),
    ("non-pytree input/output", lambda: nstviz.trace_code(NON_PYTREE_CELL, _ns(), nonstrict=["helper"]), None, r"helper was marked, but nonstrict_trace could not trace it: Invalid input type .*\(GB0236\)"),
    ("syntax error", lambda: nstviz.trace_code("def f(:\n    pass\n", _ns()), UsageError, r"syntax error at line 1.*fix it"),
    ("compiles nothing", lambda: nstviz.trace_code("y = torch.ones(3) + 1\n", _ns()), NothingCompiledError, r"compiled nothing.*Wrap it"),
    ("raises before compiling", lambda: nstviz.trace_code("raise KeyError('early')\n" + programs.SEED_CELL, _ns()), KeyError, r"early"),
    ("raises after compiling", lambda: nstviz.trace_code(programs.BREAKING_CELL + "raise KeyError('late')\n", _ns(), nonstrict=["helper"]), None, r"KeyError: 'late'"),
    ("fullgraph=True failing", lambda: SEED(), None, r"Unsupported: Call to `torch\._dynamo\.graph_break\(\)`"),
    ("recursion (finite)", lambda: nstviz.trace_code(RECURSIVE_CELL, _ns(), nonstrict=["fact"]), None, r"^$"),
    ("recursion (infinite)", lambda: nstviz.trace_code(INFINITE_RECURSION_CELL, _ns()), None, r"RecursionError: maximum recursion depth exceeded"),
    ("a generator", lambda: nstviz.trace_code(GENERATOR_CELL, _ns(), nonstrict=["gen"]), None, r"gen was marked, but nonstrict_trace could not trace it: .*\(GB0251\)"),
    # M.helper (self is an nn.Module) becomes a region; K.helper's self (a plain object) is not a pytree
    ("torch.compile on methods", lambda: nstviz.trace_code(METHOD_CELL, _ns(), nonstrict=["M.helper", "K.helper"]), None, r"K\.helper was marked, but nonstrict_trace could not trace it: Invalid input type .*\(GB0236\)"),
    ("compare: not a callable", lambda: nstviz.compare(3, torch.ones(3)), UsageError, r"needs a callable.*got int"),
    ("trace_code: not a str", lambda: nstviz.trace_code(b"x = 1", {}), UsageError, r"needs the code as a str"),
    ("trace_code: not a dict", lambda: nstviz.trace_code("x = 1", []), UsageError, r"needs a dict namespace"),
    ("bad backend", lambda: SEED(backend=""), UsageError, r"backend must be a backend name"),
    ("bad baseline", lambda: SEED(baseline="lenient"), UsageError, r"baseline must be 'as_written' or 'strict'"),
]


def _texts(report: Report) -> str:
    parts = list(report.notes)
    for run in report.runs.values():
        parts += [run.error or ""] + [m.warning or "" for m in run.marked]
    return "\n".join(p for p in parts if p)


@pytest.mark.parametrize(("case", "call", "raises", "pattern"), API_CASES, ids=[c[0] for c in API_CASES])
def test_api_bad_input(case: str, call: Callable[[], Any], raises: Any, pattern: str, before: ProcessState) -> None:
    if raises is not None:
        with pytest.raises(raises) as info:
            call()
        assert re.search(pattern, str(info.value), re.S), f"{case}: unclear message: {info.value}"
    else:
        report = call()
        report.validate()
        assert Report.from_json(report.to_json()) == report
        text = _texts(report)
        if pattern == r"^$":
            assert all(r.error is None for r in report.runs.values()), text
        else:
            assert re.search(pattern, text, re.S | re.M), f"{case}: the Report does not say it: {text}"
    assert_restored(before)


@pytest.mark.usefixtures("warm_inductor")
def test_compare_on_a_compiled_method_keeps_self() -> None:
    ns = _ns()
    exec(compile(METHOD_CELL, "<method>", "exec"), ns)  # runs inductor: before the snapshot
    before = ProcessState.take()
    report = nstviz.compare(ns["K"]().run, torch.ones(3), nonstrict=["K.helper"])
    assert not any("eager reference run raised" in n for n in report.notes), report.notes  # it lost self
    assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [
        ("baseline", "nonstrict", True),
        ("eager", "baseline", True),
        ("eager", "nonstrict", True),
    ]
    assert_restored(before)


@pytest.mark.parametrize("entry", ["trace_code", "compare", "magic"])
def test_torch_without_nonstrict_trace(entry: str, ip: Any, before: ProcessState, monkeypatch: pytest.MonkeyPatch) -> None:
    """A torch that lacks torch._dynamo.nonstrict_trace (simulated by hiding the attribute)."""
    monkeypatch.delattr(torch._dynamo, "nonstrict_trace")
    want = r"torch \S+ lacks torch\._dynamo\.nonstrict_trace, which nstviz needs; install torch 2\.13"
    if entry == "magic":
        ip.run_cell(programs.SEED_DEFS)
        with capture_output() as captured:
            result = ip.run_cell("%%nstrace --nonstrict get_magic_num\n" + programs.SEED_CELL)
        assert re.search(want, str(result.error_in_exec)), result.error_in_exec
        assert "Traceback" not in captured.stdout + captured.stderr
    else:
        with pytest.raises(UnsupportedTorchError, match=want):
            if entry == "compare":
                nstviz.compare(programs.func, torch.ones(4), nonstrict=[programs.get_magic_num])
            else:
                SEED(nonstrict=["get_magic_num"])
    monkeypatch.undo()
    assert_restored(before)


# -- through the magic --------------------------------------------------------------------------

MAGIC_CASES = [
    ("unknown name", "--nonstrict nope", programs.SEED_CELL, r"%nstrace: 'nope' is not defined"),
    ("ambiguous name", "--nonstrict stats", programs.SEED_CELL, r"'stats' is ambiguous"),
    ("builtin", "--nonstrict math.sqrt", programs.SEED_CELL, r"builtin or C function"),
    ("a class", "--nonstrict Block", programs.SEED_CELL, r"is a class \(Block\)"),
    ("lambda inside", "--nonstrict inner", INNER_CELL, r"'inner' is defined inside 'g'"),
    ("syntax error", "", "def f(:\n    pass\n", r"syntax error, so nothing was run"),
    ("compiles nothing", "", "y = torch.ones(3) + 1\n", r"compiled nothing"),
    ("bad option", "--frobnicate", programs.SEED_CELL, r"unrecognized arguments: --frobnicate"),
    ("bad budget", "--auto --budget -1", programs.SEED_CELL, r"must be a positive number of seconds"),
    ("budget without --auto", "--budget 3", programs.SEED_CELL, r"only apply with --auto"),
    ("bad --name", "--name 1x", programs.SEED_CELL, r"not a valid Python variable name"),
    ("missing folder", "--html /nonexistent/dir/r.html", programs.SEED_CELL, r"does not exist"),
]


@pytest.mark.parametrize(("case", "options", "cell", "pattern"), MAGIC_CASES, ids=[c[0] for c in MAGIC_CASES])
def test_magic_bad_input(case: str, options: str, cell: str, pattern: str, ip: Any, before: ProcessState) -> None:
    from IPython.core.error import UsageError as IPythonUsageError

    ip.run_cell(programs.SEED_DEFS + CLASSES + "import math\n")
    names = {k for k in ip.user_ns if not k.startswith("__")}
    with capture_output() as captured:
        result = ip.run_cell(f"%%nstrace {options}\n{cell}")
    assert isinstance(result.error_in_exec, IPythonUsageError), f"{case}: {result.error_in_exec!r}"
    assert re.search(pattern, str(result.error_in_exec), re.S), f"{case}: {result.error_in_exec}"
    assert "Traceback" not in captured.stdout + captured.stderr, "misuse must not show an internal traceback"
    if captured.outputs:  # a widget shown at the start is withdrawn: nothing half-done stays
        assert captured.outputs[-1].data == {"text/plain": ""}, captured.outputs[-1].data
    # Dynamo's own __-globals (__resume_at_*, __builtins_dict__*) may stay, as after a normal run
    assert {k for k in ip.user_ns if not k.startswith("__")} == names, "the namespace was not rolled back"
    assert_restored(before)


@pytest.mark.parametrize(
    ("case", "cell", "error"),
    [
        ("raises before compiling", "raise KeyError('early')\n" + programs.SEED_CELL, KeyError),
        ("raises after compiling", programs.BREAKING_CELL + "raise KeyError('late')\n", KeyError),
        ("fullgraph=True failing (no --nonstrict)", programs.SEED_CELL, Exception),
        ("infinite recursion", INFINITE_RECURSION_CELL, Exception),
    ],
)
def test_magic_user_errors_show_the_users_traceback(case: str, cell: str, error: type, ip: Any, before: ProcessState) -> None:
    ip.run_cell(programs.SEED_DEFS)
    with capture_output() as captured:
        result = ip.run_cell("%%nstrace\n" + cell)
    assert isinstance(result.error_in_exec, error), result.error_in_exec
    assert "nstviz/api.py" not in captured.stdout, "the traceback starts in the user's cell"
    assert_restored(before)
