"""The advisor's helper modules on hand-built inputs: wrappers, causes, remedies, code, counts."""

import dataclasses
import linecache
import sys
import types

import torch

from nstviz.advisor.code import Mark, recommendation_code
from nstviz.advisor.precheck import _annotation_refuses
from nstviz.advisor.remedies import config_code, config_plans, flags_hinted
from nstviz.capture.forward_hooks import effective_forwards
from nstviz.passes.assemble import build_report
from nstviz.passes.candidates import is_runtime_wrapper
from nstviz.passes.causes import explain_error, explain_failure
from nstviz.render.attempts import attempt_lines
from nstviz.report import Break, BreakSplit, Candidate, Location, Recommendation, Run
from nstviz.report.facts import count_of, counts_text, rank_breaks, short_counts, splits_text
from nstviz.tracing.unwrap import unwrap_fake_tensor_error

SRC = '''import functools

def deco(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        return func(self, *args, **kwargs)
    return wrapper

def plain(x, *args, **kwargs):
    return x

def outer():
    def inner(x):
        return x
    return inner
'''


def test_run_time_wrappers_are_closures_that_pass_args_and_kwargs_on():
    path = "<wrappers>"
    linecache.cache[path] = (len(SRC), None, SRC.splitlines(True), path)
    assert is_runtime_wrapper(Location(file=path, line=6, function="wrapper"))
    assert not is_runtime_wrapper(Location(file=path, line=10, function="plain"))  # not a closure
    assert not is_runtime_wrapper(Location(file=path, line=14, function="inner"))  # no *args/**kwargs
    assert not is_runtime_wrapper(Location(file="<nowhere>", line=1, function="wrapper"))


def test_a_str_or_callable_parameter_is_not_refused():
    assert _annotation_refuses("Callable") is True
    assert _annotation_refuses("Callable[..., Tensor]") is True
    assert _annotation_refuses("str | Callable") is False
    assert _annotation_refuses("Union[str, Callable]") is False
    assert _annotation_refuses("Optional[Callable]") is False
    assert _annotation_refuses("Generator") is True


def brk(gb, reason, root=None, detail="", hints=(), count=1, ids=()):
    return Break(gb_id=gb, reason=reason, count=count, fatal=False, location=Location(file="/m.py", line=3, function="f"),
                 root_cause=root, detail=detail, hints=hints, compile_ids=ids)


def test_failure_causes_are_unwrapped_and_the_data_dependent_hint_is_only_for_data_dependent_causes():
    internal = (
        "TorchRuntimeError: RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node "
        "with fake tensors: call_function f(*(), **{}): got RuntimeError('found non-fx-graphable type "
        "<class \\'numpy.ndarray\\'>')\n"
    )
    text = unwrap_fake_tensor_error("TorchRuntimeError: RuntimeError when making fake tensor call", internal)
    assert text == "RuntimeError: found non-fx-graphable type <class \\'numpy.ndarray\\'>"
    numpy = brk("GB0251", "Unsupported output type for nonstrict_trace-ed function", root=text)
    msg = explain_failure(numpy, {"GB0033"})
    assert msg.startswith("Unsupported output type for nonstrict_trace-ed function: RuntimeError: found non-fx")
    assert "data-dependent" not in msg and "register" in msg
    dd = brk("GB0251", "Unsupported output type for nonstrict_trace-ed function",
             root="DataDependentOutputException: aten._local_scalar_dense.default")
    assert "cannot trace data-dependent operations" in explain_failure(dd)
    none = brk("GB0236", "Invalid input type for nonstrict_trace-ed function",
               root="Unsupported: Invalid input type for nonstrict_trace-ed function",
               detail="Developer debug context: Encountered input of type <NoneType>.")
    assert explain_failure(none).startswith("Invalid input type for nonstrict_trace-ed function (it got NoneType); ")
    fatal = Break(gb_id="GB4315", reason="x", count=1, fatal=True, location=Location(file="/a/m.py", line=9, function="f"),
                  root_cause="RuntimeError: Sizes of tensors must match")
    assert explain_error("TorchRuntimeError: RuntimeError when making fake tensor call", fatal) == (
        "compile failed at m.py:9: RuntimeError: Sizes of tensors must match"
    )


def test_config_flags_come_from_the_hints_and_the_registry_ids():
    item = brk("GB0124", "Unsupported Tensor.item() call with capture_scalar_outputs=False", count=3)
    nz = brk("GB0036", "Dynamic shape operator", count=1)
    assert flags_hinted(item) == ("capture_scalar_outputs",)
    assert flags_hinted(nz) == ("capture_dynamic_output_shape_ops",)
    assert config_plans([nz, item]) == [
        ("capture_scalar_outputs",), ("capture_dynamic_output_shape_ops",),
        ("capture_scalar_outputs", "capture_dynamic_output_shape_ops"),
    ]
    assert config_plans([brk("GB0059", "print")]) == []
    assert config_code(["capture_scalar_outputs"]) == "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n"


def test_recommended_code_names_the_module_the_class_and_keeps_staticmethods(tmp_path, monkeypatch):
    (tmp_path / "nstviz_rec_pkg").mkdir()
    (tmp_path / "nstviz_rec_pkg" / "__init__.py").write_text("")
    (tmp_path / "nstviz_rec_pkg" / "mod.py").write_text(
        "import torch\n\ndef helper(x):\n    return x\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n\n    @staticmethod\n    def util(x):\n        return x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    mod = importlib.import_module("nstviz_rec_pkg.mod")
    try:
        code = recommendation_code(
            [
                Mark("helper", mod.helper, where="mod.py:3"),
                Mark("M.forward", mod.M.forward, where="mod.py:7", forward=True),
                Mark("M.util", mod.M.util, where="mod.py:11"),
            ],
            {"capture_scalar_outputs": True},
        )
        assert code.splitlines() == [
            "import torch",
            "from nstviz_rec_pkg import mod",
            "",
            "# Trace these functions non-strictly; run this before the model is built and compiled",
            "# (or call torch._dynamo.reset() afterwards).",
            "mod.helper = torch._dynamo.nonstrict_trace(mod.helper)  # def at mod.py:3",
            "mod.M.forward = torch._dynamo.nonstrict_trace(mod.M.forward)  # def at mod.py:7",
            "mod.M.util = staticmethod(torch._dynamo.nonstrict_trace(mod.M.util))  # def at mod.py:11",
            "# or: put @torch._dynamo.nonstrict_trace on the line above `def helper` (mod.py:3)",
            "# or: put @torch._dynamo.nonstrict_trace on the line above `def forward` (mod.py:7)",
            "# or: put @torch._dynamo.nonstrict_trace on the line above `def util` (mod.py:11)",
            "# torch 2.13 honours a nonstrict mark on `forward` only for modules with a forward pre-hook:",
            "torch.nn.modules.module.register_module_forward_pre_hook(lambda module, args: None)",
            "torch._dynamo.config.capture_scalar_outputs = True",
        ]
    finally:
        sys.modules.pop("nstviz_rec_pkg.mod", None)
        sys.modules.pop("nstviz_rec_pkg", None)


def test_notebook_functions_are_rebound_by_their_bare_name():
    ns: dict = {"__name__": "__main__"}
    exec(compile("def helper(x):\n    return x\n", "<cell-1>", "exec"), ns)
    assert recommendation_code([Mark("helper", ns["helper"], where="<cell-1>:1")]).splitlines()[-1] == (
        "helper = torch._dynamo.nonstrict_trace(helper)  # def at <cell-1>:1"
    )


class _Leaf(torch.nn.Module):
    def forward(self, x):
        return x


def test_forward_hooks_are_registered_only_while_marked_and_removed_on_errors():
    from torch.nn.modules import module as nn_module

    outer = torch.nn.Sequential(_Leaf(), torch.nn.Linear(2, 2), _Leaf())
    before = len(nn_module._global_forward_pre_hooks)
    with effective_forwards([_Leaf.forward]) as n:  # global: also modules created meanwhile
        assert n == 1 and len(nn_module._global_forward_pre_hooks) == before + 1
    assert len(nn_module._global_forward_pre_hooks) == before
    with effective_forwards([_Leaf.forward], modules=list(outer)) as n:
        assert n == 2 and all(len(m._forward_pre_hooks) == 1 for m in outer if isinstance(m, _Leaf))
        assert len(outer[1]._forward_pre_hooks) == 0
    assert all(len(m._forward_pre_hooks) == 0 for m in outer)
    try:
        with effective_forwards([_Leaf.forward]):
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert len(nn_module._global_forward_pre_hooks) == before
    with effective_forwards([types.FunctionType(_Leaf.forward.__code__, {})], modules=list(outer)) as n:
        assert n == 0  # another function object named forward: no class owns it
    with effective_forwards([len, _Leaf.stats if hasattr(_Leaf, "stats") else abs]) as n:
        assert n == 0  # no forward marked: nothing registered


def test_graph_breaks_caused_fold_restart_attempts_in_reports_without_caused():
    b = brk("GB0033", "Data dependent operator", count=6, ids=("0/0", "0/0_1", "1/0", "1/0_1", "2/0", "2/1"))
    def counts(t):
        return (t.reached, t.caused, t.exact)

    assert counts(count_of(b)) == (6, 3, False)
    assert counts(count_of(dataclasses.replace(b, caused=2))) == (6, 2, True)
    assert counts(count_of(dataclasses.replace(b, fatal=True))) == (6, 0, True)


def test_breaks_rank_by_caused_then_reached_then_fatal_then_first_seen():
    """The same order as the viewer's (js/test/breaks.test.js)."""
    def b(name, count, caused, fatal=False):
        return Break(gb_id=None, reason=name, count=count, caused=caused, fatal=fatal,
                     location=Location(file="/m.py", line=len(name), function=name))

    order = rank_breaks([b("a", 5, 1), b("b", 2, 2), b("c", 5, 1, True), b("d", 5, 1), b("e", 9, 0)])
    assert [x.reason for x in order] == ["b", "c", "a", "d", "e"]
    split = dataclasses.replace(b("f", 2, 2), splits=(BreakSplit(compile_id="4/0", function="Block.forward"), BreakSplit(compile_id="4/1", function="Block.forward"),
                                                      BreakSplit(compile_id="5/0", function="torch_dynamo_x", count=0)))
    assert splits_text(split) == "Block.forward 4/0 4/1, torch_dynamo_x 5/0"
    assert counts_text(split) == "caused 2 graph breaks (Block.forward 4/0 4/1, torch_dynamo_x 5/0), reached 2×"
    assert short_counts(b("g", 3, 1)) == "caused 1 graph break, reached 3×"
    # a compile split many times is written once with its count (a fuzzed count of 2**53 once
    # built a list that size and took the test run down with it)
    many = dataclasses.replace(split, splits=(BreakSplit(compile_id="4/0", function="f", count=2**53),))
    assert splits_text(many) == f"f 4/0×{2**53}"


def test_summary_lines_say_what_was_tried_also_without_a_recommendation():
    report = build_report(torch_version="x", runs={"baseline": Run(name="baseline")}, candidates=(
        Candidate(function="M.forward", why="w", status="failed", run="attempt-1", breaks_before=2, breaks_after=3,
                  error="Invalid input type (it got NoneType); only tensors"),
        Candidate(function="f", why="w", status="rejected", precheck=("it is a generator",)),
    ))
    assert attempt_lines(report) == [
        "advisor: nothing to recommend (1 attempt(s), 2 candidate(s))",
        "  failed    M.forward 2 -> 3 breaks: Invalid input type (it got NoneType); only tensors",
        "  rejected  f: it is a generator",
    ]
    rec = Recommendation(functions=("g",), code="", breaks_before=2, breaks_after=0, outputs_match=True,
                         config=("capture_scalar_outputs",))
    report2 = build_report(torch_version="x", runs={}, recommendation=rec)
    assert attempt_lines(report2) == ["advisor: apply g, config capture_scalar_outputs=True (breaks 2 -> 0)"]
    counted = Recommendation(functions=(), code="", breaks_before=1, breaks_after=2, outputs_match=True,
                             config=("capture_scalar_outputs",), graph_breaks_before=2, graph_breaks_after=0,
                             graphs_before=4, graphs_after=3)
    assert attempt_lines(build_report(torch_version="x", runs={}, recommendation=counted)) == [
        "advisor: apply config capture_scalar_outputs=True (graphs 4 -> 3, breaks 1 -> 2, graph breaks 2 -> 0)"]


def test_c_function_breaks_that_nothing_removed_name_custom_ops_and_polyfills():
    b = Break(gb_id="GB0059", reason="Failed to trace builtin operator", count=1, fatal=False,
              location=Location(file="/x/model.py", line=7, function="f"), gb_type="Failed to trace builtin operator")
    report = build_report(torch_version="x", runs={"baseline": Run(name="baseline", breaks=(b,))}, candidates=(
        Candidate(function="f", why="w", status="no_change", run="attempt-1", breaks_before=1, breaks_after=1),
    ))
    # said with the break (Break.advice, set once when the Report is built), not in the advisor's lines
    assert attempt_lines(report)[-1] == "  no_change f 1 -> 1 breaks"
    (kept,) = report.runs["baseline"].breaks
    assert kept.advice.startswith("a call into C/builtin code: Dynamo cannot trace it")
    assert "    what else: a call into C/builtin code" in report.summary()


def _prints_then_sin(x):
    print("shown on every eager call")
    return x.sin()


def _prints_only_in_a_nested_def(x):
    def report():
        print("not in the function's own body")

    return x.sin(), report


def test_a_function_that_prints_says_its_print_runs_only_while_traced():
    """Traced non-strictly under aot_eager/inductor, its print runs only while it is traced."""
    from nstviz.advisor.side_effects import print_notes

    (note,) = print_notes(_prints_then_sin)
    assert note.startswith(f"it calls print (line {_prints_then_sin.__code__.co_firstlineno + 1})"), note
    assert "never on later calls" in note
    assert print_notes(_prints_only_in_a_nested_def) == []
    assert print_notes(torch.sin) == []  # no Python source: nothing to say
    code = recommendation_code([Mark("_prints_then_sin", _prints_then_sin, where="x.py:1")])
    assert "# note: _prints_then_sin calls print (line" in code, code


def test_premise_a_nonstrict_functions_print_runs_only_while_it_is_traced(capsys):
    """torch alone: the fact behind the refusal above (aot_eager; inductor does the same)."""

    @torch._dynamo.nonstrict_trace
    def helper(x):
        print("PRINTED")
        return x.sin()

    torch._dynamo.reset()
    f = torch.compile(lambda x: helper(x) + 1, backend="aot_eager")
    f(torch.ones(2))
    assert "PRINTED" in capsys.readouterr().out  # while tracing
    f(torch.ones(2))
    f(torch.ones(2))
    assert "PRINTED" not in capsys.readouterr().out  # never again
    torch._dynamo.reset()
