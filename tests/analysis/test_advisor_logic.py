"""The advisor's proposal, pre-check and selection logic on hand-built runs.

``try_marks`` here is a table: which marked set gives which breaks and outputs. Real
compiles are in test_advisor_compile.py.
"""

import dataclasses
import os

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nstviz.advisor.search import plan_candidates, qualname_at, run_advisor
from nstviz.report import Break, Compile, Graph, Location, MarkedFunction, OutputCheck, OutputDetail, Run

HERE = os.path.abspath(__file__)


def loc(fn, offset=1):
    code = getattr(fn, "__func__", fn).__code__
    return Location(file=code.co_filename, line=code.co_firstlineno + offset, function=code.co_name)


# user code the hand-built stacks point into ----------------------------------------------------


def leaf(x):
    print("breaks here")
    return x


def middle(x):
    return leaf(x) + 1


def compiled_entry(x):
    return middle(x) * 2


def other_leaf(x):
    return x.numpy()


class Block(torch.nn.Module):
    def stats(self, x):
        print("stats")
        return x.mean()

    def forward(self, x):
        return self.stats(x)


class Encoder(torch.nn.Module):
    def forward(self, x):
        print("encoder")
        return x


def takes_optional(x, m=None):
    print(m)
    return x


def calls_with_none(x):
    return takes_optional(x, None)


SCALE = 2.0


def reads_global(x):
    print("r")
    return x * SCALE


def gen(x):
    yield x


def entry_with_closure(x):
    def local_helper(y):
        print(y)
        return y

    return local_helper(x)


NAMESPACE = {
    "leaf": leaf,
    "middle": middle,
    "compiled_entry": compiled_entry,
    "other_leaf": other_leaf,
    "Block": Block,
    "Block.stats": Block.stats,
    "gen": gen,
    "entry_with_closure": entry_with_closure,
    "Block.forward": Block.forward,
    "Encoder.forward": Encoder.forward,
    "takes_optional": takes_optional,
    "calls_with_none": calls_with_none,
    "reads_global": reads_global,
}


def resolve(name):
    return NAMESPACE.get(name)


def brk(stack, gb="GB0059", reason="Failed to trace builtin operator", count=1, fatal=False, compile_ids=()):
    return Break(
        gb_id=gb, gb_type=reason, reason=reason, count=count, fatal=fatal, location=stack[-1], stack=tuple(stack),
        compile_ids=compile_ids,
    )


B_LEAF = brk([loc(compiled_entry), loc(middle), loc(leaf)])
B_OTHER = brk([loc(compiled_entry), loc(other_leaf)], gb="GB0026", reason="Attempted to call function marked as skipped")
B_STATS = brk([loc(compiled_entry), loc(Block.stats)], count=12)
COMPILES = (Compile(frame_id=0, compile_id=0, function="compiled_entry", location=loc(compiled_entry, 0), graph_ids=("0/0:dynamo",)),)


def run(name, *breaks, compiles=COMPILES, error=None, graphs=None):
    """A hand-built run; unless given, one Dynamo graph more than its graph breaks (none when it failed)."""
    if graphs is None:
        graphs = 0 if error is not None or any(b.fatal for b in breaks) else 1 + len(breaks)
    made = tuple(Graph(id=f"{i}/0:dynamo", level="dynamo", frame_id=i, compile_id=0) for i in range(graphs))
    return Run(name=name, breaks=tuple(breaks), compiles=compiles, error=error, graphs=made, wall_time_s=0.01)


MATCH = OutputCheck(match=True, max_abs_diff=0.0)
DIFFER = OutputCheck(
    match=False, max_abs_diff=3.0, details=(OutputDetail(path="return", match=False, max_abs_diff=3.0, note="1 of 3 elements"),)
)


class Table:
    """try_marks from a table: frozenset of marked names -> (breaks, check)."""

    def __init__(self, table, default):
        self.table = table
        self.default = default
        self.calls = []

    def __call__(self, marks, run_name):
        names = frozenset(getattr(m, "__qualname__", "?") for m in marks)
        self.calls.append((run_name, names))
        breaks, check = self.table.get(names, self.default)
        return run(run_name, *breaks), check


def by_fn(cands):
    return {c.function: c for c in cands}


# -- proposal ------------------------------------------------------------------------------------


def test_qualname_from_source():
    assert qualname_at(loc(Block.stats)) == "Block.stats"
    assert qualname_at(loc(leaf)) == "leaf"
    inner = entry_with_closure.__code__.co_consts
    code = next(c for c in inner if hasattr(c, "co_name") and c.co_name == "local_helper")
    assert qualname_at(Location(file=HERE, line=code.co_firstlineno + 1, function="local_helper")) == (
        "entry_with_closure.<locals>.local_helper"
    )


def test_candidates_innermost_first_then_callers_never_the_compiled_frame():
    plan = plan_candidates(run("baseline", B_LEAF))
    assert [p.name for p in plan] == ["leaf", "middle"]
    assert plan[0].reasons == [f"contains the break at {os.path.basename(HERE)}:{loc(leaf).line} (GB0059 Failed to trace builtin operator)"]
    assert plan[1].reasons[0].startswith("calls leaf (")


def test_most_reached_break_first_among_equals_and_shared_callers_merged():
    plan = plan_candidates(run("baseline", B_LEAF, B_STATS, B_OTHER))
    names = [p.name for p in plan]
    assert names[0] == "Block.stats"  # reached 12 times (graph breaks caused unknown: estimated 1 each)
    assert plan[0].reasons[0].endswith(
        "(GB0059 Failed to trace builtin operator, caused ~1 graph break, reached 12×)"
    )
    assert set(names) == {"Block.stats", "leaf", "middle", "other_leaf"}


def test_break_that_caused_most_graph_breaks_first_not_the_most_reached():
    stats = dataclasses.replace(B_STATS, caused=1)  # reached 12 times, counted once by Dynamo
    other = dataclasses.replace(B_OTHER, count=3, caused=3)
    plan = plan_candidates(run("baseline", B_LEAF, stats, other))
    assert [p.name for p in plan][:2] == ["other_leaf", "Block.stats"]
    assert plan[0].reasons[0].endswith(
        "(GB0026 Attempted to call function marked as skipped, caused 3 graph breaks, reached 3×)"
    )
    assert plan[1].reasons[0].endswith("(GB0059 Failed to trace builtin operator, caused 1 graph break, reached 12×)")


def test_torch_frames_and_comprehensions_are_passed_over():
    torch_file = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "module.py")
    stack = [
        loc(compiled_entry),
        Location(file=torch_file, line=1775, function="_call_impl"),
        Location(file=HERE, line=loc(middle).line, function="<listcomp>"),
        loc(leaf),
    ]
    plan = plan_candidates(run("baseline", brk(stack)))
    assert [p.name for p in plan] == ["leaf"]


def test_a_kept_rewrites_own_code_on_a_stack_is_passed_over():
    # a rewritten function runs code compiled from "<nstviz rewrite of middle>": its original was a
    # candidate already, and a mark of the rewrite's code by its bare name could not be placed
    rewritten = Location(file="<nstviz rewrite of middle>", line=3, function="middle")
    plan = plan_candidates(run("baseline", brk([loc(compiled_entry), rewritten, loc(leaf)])))
    assert [p.name for p in plan] == ["leaf"]
    # nor is it when the break is in the rewritten function Dynamo compiled as a frame of its own
    assert plan_candidates(run("baseline", brk([rewritten]), compiles=())) == []


def test_break_in_the_compiled_function_itself_is_tried_as_torch_marks_it():
    # @torch.compile over @nonstrict_trace traces the function non-strictly from a wrapper frame
    # (torch/_dynamo/eval_frame.py): the advisor tries it (tests/users), it is not rejected
    b = brk([loc(compiled_entry)])
    cands, rec = run_advisor(run("baseline", b), resolve, Table({}, ((b,), MATCH)), budget_s=10, max_attempts=5)
    (c,) = cands
    assert c.function == "compiled_entry" and c.status == "no_change" and not c.precheck
    assert "the function torch.compile compiles" in c.why
    assert rec is None


def test_a_frame_compiled_on_its_own_after_a_break_at_its_call_is_a_candidate():
    # Dynamo broke at the call of other_leaf in compiled_entry, then compiled other_leaf alone.
    compiles = (*COMPILES, Compile(frame_id=1, compile_id=0, function="other_leaf", location=loc(other_leaf, 0)))
    b = brk([loc(compiled_entry), loc(other_leaf)], compile_ids=("1/0",))
    plan = plan_candidates(run("baseline", b, compiles=compiles))
    assert [p.name for p in plan] == ["other_leaf"]
    assert "compiled it on its own" in plan[0].reasons[0]


def test_a_frame_compiled_later_is_a_candidate_even_when_the_stack_lacks_its_caller():
    compiles = (*COMPILES, Compile(frame_id=3, compile_id=0, function="other_leaf", location=loc(other_leaf, 0)))
    b = brk([Location(file="<cell>", line=1, function="<module>"), loc(other_leaf)], compile_ids=("3/0",))
    plan = plan_candidates(run("baseline", b, compiles=compiles))
    assert [p.name for p in plan] == ["other_leaf"] and not plan[0].problems


def test_same_named_frames_are_told_apart_by_their_def_line():
    # frame 0 is Block.forward (the entry); Encoder.forward, same name and file, was compiled later
    compiles = (
        Compile(frame_id=0, compile_id=0, function="forward", location=loc(Block.forward, 0), graph_ids=("0/0:dynamo",)),
        Compile(frame_id=1, compile_id=0, function="forward", location=loc(Encoder.forward, 0), graph_ids=("1/0:dynamo",)),
    )
    b = brk([Location(file="<cell>", line=1, function="<module>"), loc(Encoder.forward)], compile_ids=("0/0", "1/0"))
    cands, _ = run_advisor(run("baseline", b, compiles=compiles), resolve, Table({}, ((b,), MATCH)), budget_s=10, max_attempts=3)
    (c,) = cands
    # a module's forward is tried (nstviz makes the mark effective with a forward pre-hook)
    assert c.function == "Encoder.forward" and c.status == "no_change" and c.precheck == ()


# -- pre-checks ----------------------------------------------------------------------------------


def test_prechecks_reject_what_cannot_be_marked():
    closure_loc = Location(
        file=HERE, line=entry_with_closure.__code__.co_firstlineno + 2, function="local_helper"
    )
    lam = brk([loc(compiled_entry), Location(file=HERE, line=loc(leaf).line, function="<lambda>")])
    b_closure = brk([loc(entry_with_closure), closure_loc])
    b_gen = brk([loc(compiled_entry), loc(gen)])
    compiles = (*COMPILES, Compile(frame_id=2, compile_id=0, function="entry_with_closure"))
    names = {"gen": gen, "leaf": len}  # `leaf` resolves to a builtin: a different object
    b_leaf = brk([loc(compiled_entry), loc(leaf)])
    table = Table({}, ((), MATCH))
    cands, _ = run_advisor(
        run("baseline", lam, b_closure, b_gen, b_leaf, compiles=compiles), names.get, table, budget_s=10, max_attempts=5
    )
    got = by_fn(cands)
    assert got["<lambda>"].status == "rejected" and "lambda" in got["<lambda>"].precheck[0]
    local = got["entry_with_closure.<locals>.local_helper"]
    assert local.status == "rejected" and "defined inside `entry_with_closure`" in local.precheck[0]
    assert got["gen"].status == "rejected" and "generator" in got["gen"].precheck[0]
    assert got["leaf"].status == "rejected" and "not a Python function" in got["leaf"].precheck[0]
    assert table.calls == []  # nothing was run


def test_explicit_none_arguments_are_rejected_and_module_forwards_are_not():
    b_fwd = brk([loc(compiled_entry), loc(Block.forward), loc(Block.stats)])
    b_none = brk([loc(compiled_entry), loc(calls_with_none), loc(takes_optional)])
    table = Table({}, ((b_fwd, b_none), MATCH))
    cands, _ = run_advisor(run("baseline", b_fwd, b_none), resolve, table, budget_s=10, max_attempts=10)
    got = by_fn(cands)
    assert got["Block.forward"].status != "rejected" and got["Block.forward"].precheck == ()
    opt = got["takes_optional"]
    assert opt.status == "rejected" and "an explicit None as its argument 2" in opt.precheck[0]
    assert "GB0236" in opt.precheck[0]
    assert got["calls_with_none"].status != "rejected"  # its own caller passes a tensor
    assert got["Block.stats"].status == "no_change"


def test_explicit_none_is_no_reason_to_refuse_where_torch_takes_none_leaves():
    b_none = brk([loc(compiled_entry), loc(calls_with_none), loc(takes_optional)])
    table = Table({frozenset({"takes_optional"}): ((), MATCH)}, ((b_none,), MATCH))
    adapted: list[str] = []

    def adapt(name, fn, files):
        adapted.append(name)
        return None

    cands, rec = run_advisor(
        run("baseline", b_none), resolve, table, budget_s=10, max_attempts=10, adapt=adapt, none_inputs_ok=True,
        decorator="torch.compiler.nonstrict_trace",
    )
    got = by_fn(cands)
    assert got["takes_optional"].status == "improved" and got["takes_optional"].precheck == ()
    assert adapted == [] and "adapter: takes_optional" not in got
    assert rec is not None and rec.adapters == () and rec.functions == ("takes_optional",)
    mod = takes_optional.__module__
    assert f"{mod}.takes_optional = torch.compiler.nonstrict_trace({mod}.takes_optional)" in rec.code
    assert "torch._dynamo.nonstrict_trace" not in rec.code
    # the same break where torch refuses None: refused, and the adapter is asked for
    cands, _ = run_advisor(run("baseline", b_none), resolve, table, budget_s=10, max_attempts=10, adapt=adapt)
    assert by_fn(cands)["takes_optional"].status == "rejected" and adapted == ["takes_optional"]


def test_a_leaf_function_of_the_code_is_not_proposed():
    b = brk([loc(compiled_entry), loc(leaf)])
    mark = MarkedFunction(spec="<source>", qualname="leaf", origin="in_source", decorator="leaf_function")
    table = Table({}, ((b,), MATCH))
    cands, rec = run_advisor(dataclasses.replace(run("baseline", b), marked=(mark,)), resolve, table, budget_s=10, max_attempts=3)
    got = by_fn(cands)
    assert got["leaf"].status == "rejected" and "leaf_function" in got["leaf"].precheck[0]
    assert table.calls == [] and rec is None


def test_reads_are_noted_in_why_and_named_as_the_likely_cause_of_different_outputs():
    b = brk([loc(compiled_entry), loc(reads_global)])
    cands, _ = run_advisor(run("baseline", b), resolve, Table({}, ((), DIFFER)), budget_s=10, max_attempts=3)
    c = by_fn(cands)["reads_global"]
    assert "note: it reads SCALE (global)" in c.why
    assert c.status == "worse" and "likely cause: it reads SCALE" in c.error


def _output_refused():
    """The break a mark adds when nonstrict_trace refuses the function's output (GB0251)."""
    return Break(
        gb_id="GB0251", reason="Unsupported output type for nonstrict_trace-ed function", count=1, fatal=False,
        location=loc(compiled_entry),
    )


def test_data_dependent_failure_says_nonstrict_cannot_help():
    dd = brk([loc(compiled_entry), loc(other_leaf)], gb="GB0124", reason="Unsupported Tensor.item() call")
    table = Table({}, ((dd, _output_refused()), MATCH))
    cands, rec = run_advisor(run("baseline", dd), resolve, table, budget_s=10, max_attempts=3)
    c = by_fn(cands)["other_leaf"]
    assert c.status == "failed" and c.gb_id == "GB0251"
    assert "cannot trace data-dependent operations" in c.error and "capture_scalar_outputs" in c.error
    assert rec is None


def test_a_failed_attempt_also_says_when_the_outputs_changed():
    table = Table({}, ((B_OTHER, _output_refused()), DIFFER))
    cands, _ = run_advisor(run("baseline", B_OTHER), resolve, table, budget_s=10, max_attempts=1)
    c = by_fn(cands)["other_leaf"]
    assert c.status == "failed" and c.outputs_match is False
    assert "; the outputs also changed (outputs differ from the baseline" in c.error


def test_a_helper_seen_returning_numpy_is_refused_before_any_compiled_run():
    """An eager run shows np_mask returning an ndarray: refused untried; np_scale (a tensor) is tried."""
    b_mask = brk([loc(compiled_entry), loc(uses_np_mask), loc(np_mask)], gb="GB0007", reason="Attempted to call a C function")
    b_scale = brk([loc(compiled_entry), loc(uses_np_mask), loc(np_scale)], gb="GB0007", reason="Attempted to call a C function")
    table = Table({}, ((b_mask, b_scale), MATCH))
    eager_runs = []

    def run_eager():
        eager_runs.append(uses_np_mask(torch.arange(4.0)))
        return True

    cands, _ = run_advisor(
        run("baseline", b_mask, b_scale), resolve, table, budget_s=10, max_attempts=4, run_eager=run_eager
    )
    got = by_fn(cands)
    assert got["np_mask"].status == "rejected" and got["np_mask"].run is None
    assert got["np_mask"].precheck[0].startswith("it returns a numpy.ndarray (seen in an eager run of the code)")
    assert not any("np_mask" in names for _, names in table.calls)
    assert any("np_scale" in names for _, names in table.calls)  # numpy inside, a tensor out: tried
    assert len(eager_runs) == 1 and NAMESPACE["np_mask"] is np_mask and globals()["np_mask"] is np_mask
    # without an eager run (a cell's code, not a callable with inputs) it is tried as before
    table = Table({}, ((b_mask, b_scale), MATCH))
    cands, _ = run_advisor(run("baseline", b_mask, b_scale), resolve, table, budget_s=10, max_attempts=4)
    assert any("np_mask" in names for _, names in table.calls)


def test_closures_made_in_inlined_callers_and_functions_already_marked_are_rejected():
    code = entry_with_closure.__code__
    inner = next(c for c in code.co_consts if hasattr(c, "co_name") and c.co_name == "local_helper")
    # entry_with_closure is inlined here (called from compiled_entry), not compiled on its own
    stack = [
        loc(compiled_entry),
        loc(entry_with_closure, 5),
        Location(file=HERE, line=inner.co_firstlineno + 1, function="local_helper"),
    ]
    marked_leaf = brk([loc(compiled_entry), loc(leaf)])
    base = Run(
        name="baseline", breaks=(brk(stack), marked_leaf), compiles=COMPILES,
        marked=(MarkedFunction(spec="<source>", qualname="leaf", origin="in_source"),),
    )
    cands, _ = run_advisor(base, resolve, Table({}, ((), MATCH)), budget_s=10, max_attempts=5)
    got = by_fn(cands)
    assert "defined inside `entry_with_closure`" in got["entry_with_closure.<locals>.local_helper"].precheck[0]
    assert got["leaf"].status == "rejected" and "already traced non-strictly" in got["leaf"].precheck[0]


def test_a_name_that_now_means_another_function_is_rejected():
    other: dict = {}
    exec(compile("def other_leaf(x):\n    return x\n", "<elsewhere>", "exec"), other)
    cands, _ = run_advisor(run("baseline", B_OTHER), other.get, Table({}, ((), MATCH)), budget_s=10, max_attempts=5)
    c = by_fn(cands)["other_leaf"]
    assert c.status == "rejected" and "now refers to another function (defined at <elsewhere>:1)" in c.precheck[0]


def make_wrapper(fn):
    def wrapped(x):
        print("wrapped")
        return fn(x)

    return wrapped


def test_functions_made_by_decorators_outside_the_region_say_why_they_cannot_be_named():
    wrapped = make_wrapper(leaf)
    code = wrapped.__code__
    frame = Location(file=code.co_filename, line=code.co_firstlineno + 1, function="wrapped")
    b = brk([loc(compiled_entry), frame])
    cands, _ = run_advisor(run("baseline", b), resolve, Table({}, ((), MATCH)), budget_s=10, max_attempts=5)
    c = by_fn(cands)["make_wrapper.<locals>.wrapped"]
    assert c.status == "rejected" and "created at run time inside `make_wrapper`" in c.precheck[0]


def test_unresolvable_name_is_rejected():
    cands, _ = run_advisor(run("baseline", B_OTHER), {}.get, Table({}, ((), MATCH)), budget_s=10, max_attempts=5)
    assert by_fn(cands)["other_leaf"].status == "rejected"
    assert "cannot find it by name" in by_fn(cands)["other_leaf"].precheck[0]

    def ambiguous(name):
        raise LookupError(f"'{name}' is ambiguous: it names 2 functions")

    cands, _ = run_advisor(run("baseline", B_OTHER), ambiguous, Table({}, ((), MATCH)), budget_s=10, max_attempts=5)
    assert "'other_leaf' is ambiguous" in by_fn(cands)["other_leaf"].precheck[0]


# -- trying and selecting ------------------------------------------------------------------------


def test_keeps_improving_marks_and_recommends_the_combination():
    table = Table(
        {
            frozenset({"leaf"}): ((B_STATS, B_OTHER), MATCH),
            frozenset({"leaf", "other_leaf"}): ((B_STATS, B_OTHER), MATCH),
        },
        ((B_LEAF, B_STATS, B_OTHER), MATCH),
    )
    base = run("baseline", B_LEAF, B_STATS, B_OTHER)
    msgs = []
    cands, rec = run_advisor(base, resolve, table, budget_s=60, max_attempts=10, progress=msgs.append)
    got = by_fn(cands)
    assert got["Block.stats"].status == "no_change"  # tried first (12 hits), alone it does nothing here
    assert got["leaf"].status == "improved"
    assert got["leaf"].breaks_before == 3 and got["leaf"].breaks_after == 2
    assert got["middle"].status == "skipped" and "not needed" in got["middle"].error
    assert got["other_leaf"].status == "no_change"
    assert [c[0] for c in table.calls] == [f"attempt-{i}" for i in range(1, len(table.calls) + 1)]
    assert msgs and msgs[0].startswith("attempt-1: trying Block.stats")
    assert rec is not None and rec.functions == ("leaf",)
    assert rec.breaks_before == 3 and rec.breaks_after == 2 and rec.outputs_match is True
    # where `leaf` is looked up: its module's globals, with the import (pasted code works)
    mod = leaf.__module__
    assert f"{mod}.leaf = torch._dynamo.nonstrict_trace({mod}.leaf)" in rec.code and f"import {mod}\n" in rec.code


def test_method_code_form_and_cumulative_marks():
    table = Table(
        {
            frozenset({"Block.stats"}): ((B_LEAF,), MATCH),
            frozenset({"Block.stats", "leaf"}): ((), MATCH),
        },
        ((B_LEAF, B_STATS), MATCH),
    )
    _cands, rec = run_advisor(run("baseline", B_LEAF, B_STATS), resolve, table, budget_s=60, max_attempts=10)
    assert rec is not None and rec.functions == ("Block.stats", "leaf") and rec.breaks_after == 0
    mod = Block.__module__
    assert f"{mod}.Block.stats = torch._dynamo.nonstrict_trace({mod}.Block.stats)" in rec.code
    assert table.calls[-1] == ("attempt-2", frozenset({"Block.stats", "leaf"}))  # the combination ran


def test_no_change_says_when_the_mark_never_applied():
    def try_marks(marks, name):
        warn = "leaf was marked but no call went through nonstrict_trace"
        marked = (MarkedFunction(spec="leaf", qualname="leaf", origin="advisor", applied=False, warning=warn),)
        return dataclasses.replace(run(name, B_LEAF), marked=marked), MATCH

    cands, _ = run_advisor(run("baseline", B_LEAF), resolve, try_marks, budget_s=10, max_attempts=1)
    c = by_fn(cands)["leaf"]
    assert c.status == "no_change" and c.error == "leaf was marked but no call went through nonstrict_trace"


def test_outputs_that_differ_make_a_candidate_worse_not_kept():
    table = Table({frozenset({"leaf"}): ((), DIFFER)}, ((B_LEAF,), MATCH))
    cands, rec = run_advisor(run("baseline", B_LEAF), resolve, table, budget_s=60, max_attempts=10)
    got = by_fn(cands)
    assert got["leaf"].status == "worse" and got["leaf"].outputs_match is False
    assert "outputs differ from the baseline at return" in got["leaf"].error
    assert got["middle"].status in ("worse", "no_change")  # tried next, same table default
    assert rec is None


def test_nonstrict_failures_report_their_gb_id_and_cause():
    fail = Break(
        gb_id="GB0251", reason="Unsupported output type for nonstrict_trace-ed function", count=1, fatal=False,
        location=loc(middle), root_cause="DataDependentOutputException(aten._local_scalar_dense.default)",
    )
    bad_input = Break(
        gb_id="GB0236", reason="Invalid input type for nonstrict_trace-ed function", count=1, fatal=False,
        location=loc(compiled_entry),
    )
    table = Table(
        {frozenset({"leaf"}): ((B_LEAF, fail), MATCH), frozenset({"middle"}): ((bad_input,), MATCH)},
        ((B_LEAF,), MATCH),
    )
    cands, rec = run_advisor(run("baseline", B_LEAF), resolve, table, budget_s=60, max_attempts=10)
    got = by_fn(cands)
    assert got["leaf"].status == "failed" and got["leaf"].gb_id == "GB0251"
    assert "DataDependentOutputException" in got["leaf"].error
    # leaf's mark failed on data-dependent code at its call site in middle: middle's mark traces it too
    assert got["middle"].status == "skipped" and got["middle"].run is None
    assert got["middle"].error.startswith("not tried: it calls leaf, whose mark failed on data-dependent code")
    assert rec is None


def test_errors_in_the_attempt_run_and_in_try_marks_are_failures():
    def boom(marks, name):
        raise RuntimeError("backend exploded (GB0000 for testing)")

    cands, _rec = run_advisor(run("baseline", B_LEAF), resolve, boom, budget_s=60, max_attempts=10)
    assert all(c.status == "failed" for c in cands) and by_fn(cands)["leaf"].gb_id == "GB0000"

    def user_error(marks, name):
        return run(name, error="Unsupported: Attempted to call function marked as skipped (GB0007)"), MATCH

    cands, _ = run_advisor(run("baseline", B_LEAF), resolve, user_error, budget_s=60, max_attempts=10)
    assert by_fn(cands)["leaf"].status == "failed" and by_fn(cands)["leaf"].gb_id == "GB0007"


def test_attempt_budget_marks_the_rest_skipped():
    table = Table({}, ((B_LEAF, B_STATS, B_OTHER), MATCH))
    cands, _ = run_advisor(run("baseline", B_LEAF, B_STATS, B_OTHER), resolve, table, budget_s=60, max_attempts=2)
    assert len(table.calls) == 2
    skipped = [c for c in cands if c.status == "skipped"]
    assert len(skipped) == 2 and all("attempt limit (2)" in c.error for c in skipped)


def test_time_budget_marks_the_rest_skipped(monkeypatch):
    """Each attempt takes 1 s on the advisor's clock (a clock the attempts advance, no sleeping):
    with 1.5 s, the first attempt runs and the second is not started (1 s more would exceed it)."""
    import types

    from nstviz.advisor import config_trials, steps
    from nstviz.capture import deadline

    clock = [100.0]
    for module in (steps, config_trials, deadline):  # the search's steps and its Deadline read the same clock
        monkeypatch.setattr(module, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))

    def one_second(marks, name):
        clock[0] += 1.0
        return run(name, B_LEAF, B_STATS), MATCH

    cands, _ = run_advisor(run("baseline", B_LEAF, B_STATS), resolve, one_second, budget_s=1.5, max_attempts=10)
    skipped = "time budget (1.5 s): 0.5 s left, shorter than one run (~1.0 s)"
    assert [(c.function, c.status, c.run, c.error) for c in cands] == [
        ("Block.stats", "no_change", "attempt-1",
         "the breaks stayed where they were (3 -> 3 graphs): test_advisor_logic.py:29 (GB0059 Failed to trace builtin "
         "operator); test_advisor_logic.py:47 (GB0059 Failed to trace builtin operator, caused ~1 graph break, reached 12×)"),
        ("leaf", "skipped", None, skipped),
        ("middle", "skipped", None, skipped),
    ]


def test_a_budget_shorter_than_one_run_tries_nothing():
    base = Run(name="baseline", breaks=(B_LEAF,), compiles=COMPILES, wall_time_s=5.0)
    table = Table({}, ((B_LEAF,), MATCH))
    cands, _ = run_advisor(base, resolve, table, budget_s=2.0, max_attempts=10)
    assert table.calls == []
    assert all(c.status == "skipped" and "shorter than one run (~5.0 s)" in c.error for c in cands)


def test_fullgraph_fatal_break_moving_on_is_progress_and_revealed_breaks_get_candidates():
    f1 = brk([loc(compiled_entry), loc(other_leaf)], fatal=True, gb="GB0026")
    f2 = brk([loc(compiled_entry), loc(Block.stats)], fatal=True)
    table = Table(
        {frozenset({"other_leaf"}): ((f2,), MATCH), frozenset({"other_leaf", "Block.stats"}): ((), MATCH)},
        ((f1,), MATCH),
    )
    cands, rec = run_advisor(run("baseline", f1), resolve, table, budget_s=60, max_attempts=10)
    got = by_fn(cands)
    assert got["other_leaf"].status == "improved" and got["other_leaf"].breaks_after == 1
    assert got["Block.stats"].status == "improved"  # proposed from attempt-1's new fatal break
    assert rec is not None and rec.functions == ("other_leaf", "Block.stats") and rec.breaks_after == 0


def test_no_breaks_no_candidates():
    cands, rec = run_advisor(run("baseline"), resolve, Table({}, ((), MATCH)), budget_s=5, max_attempts=5)
    assert cands == () and rec is None


def test_functions_of_other_modules_get_their_module_path_and_an_import(tmp_path, monkeypatch):
    import importlib
    import sys

    (tmp_path / "nstviz_advisor_helpermod.py").write_text("def noisy(x):\n    print('x')\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("nstviz_advisor_helpermod")
    try:
        b = brk([loc(compiled_entry), loc(mod.noisy)])

        def resolve_dotted(name):
            return mod.noisy if name == "nstviz_advisor_helpermod.noisy" else None

        table = Table({frozenset({"noisy"}): ((), MATCH)}, ((b,), MATCH))
        cands, rec = run_advisor(run("baseline", b), resolve_dotted, table, budget_s=10, max_attempts=3)
        assert cands[0].function == "nstviz_advisor_helpermod.noisy" and cands[0].status == "improved"
        assert "import nstviz_advisor_helpermod\n" in rec.code
        assert (
            "nstviz_advisor_helpermod.noisy = torch._dynamo.nonstrict_trace(nstviz_advisor_helpermod.noisy)"
            in rec.code
        )
    finally:
        sys.modules.pop("nstviz_advisor_helpermod", None)


# -- property: invariants of the selection on random oracles ----------------------------------


FUNCS = [leaf, middle, other_leaf, Block.stats, takes_optional, reads_global]
FRAMES = [loc(f) for f in FUNCS]


@settings(max_examples=60, deadline=None)
@given(
    stacks=st.lists(st.lists(st.integers(0, len(FUNCS) - 1), min_size=1, max_size=3, unique=True), min_size=1, max_size=4),
    fixes=st.lists(st.sets(st.integers(0, 3)), min_size=len(FUNCS), max_size=len(FUNCS)),
    bad_outputs=st.sets(st.integers(0, len(FUNCS) - 1)),
    max_attempts=st.integers(0, 5),
)
def test_property_selection_invariants(stacks, fixes, bad_outputs, max_attempts):
    breaks = [brk([loc(compiled_entry), *(FRAMES[i] for i in s)], gb=f"GB{k:04d}") for k, s in enumerate(stacks)]
    by_qual = {qualname_at(FRAMES[i]): i for i in range(len(FUNCS))}
    calls = []

    def oracle(marks, name):
        idx = [by_qual[m.__qualname__] for m in marks]
        calls.append((name, idx))
        fixed = set().union(*(fixes[i] for i in idx)) if idx else set()
        left = tuple(b for k, b in enumerate(breaks) if k not in fixed)
        return run(name, *left), (DIFFER if any(i in bad_outputs for i in idx) else MATCH)

    names = {qualname_at(f): fn for f, fn in zip(FRAMES, FUNCS, strict=True)}
    cands, rec = run_advisor(run("baseline", *breaks), names.get, oracle, budget_s=60, max_attempts=max_attempts)
    assert len(calls) <= max_attempts
    assert [c[0] for c in calls] == [f"attempt-{i + 1}" for i in range(len(calls))]
    tried = [c for c in cands if c.run]
    assert len({c.function for c in tried}) == len(tried)  # nothing tried twice
    improved = [c.function for c in sorted(tried, key=lambda c: int(c.run.split("-")[1])) if c.status == "improved"]
    # every attempt marks exactly the ones kept so far plus the new one
    kept: list[int] = []
    for (_, idx), c in zip(calls, sorted(tried, key=lambda c: int(c.run.split("-")[1])), strict=True):
        assert idx[:-1] == kept
        if c.status == "improved":
            kept.append(idx[-1])
            assert c.outputs_match is True and c.breaks_after <= c.breaks_before
    if rec is None:
        assert improved == []
    else:
        assert list(rec.functions) == improved
        assert rec.outputs_match is True and rec.breaks_after < rec.breaks_before
    assert all(c.status in ("improved", "no_change", "worse", "failed", "rejected", "skipped") for c in cands)


class FakeAdapter:
    """Stands for an adapter object (nstviz.capture.adapters.Adapter) in a table."""

    def __init__(self, name):
        self.__qualname__ = f"adapter-{name}"


def test_an_adapter_replaces_a_kept_mark_that_falls_back_on_none_inputs():
    fatal = brk([loc(compiled_entry), loc(middle), loc(leaf)], gb="GB0026", reason="Attempted to call function marked as skipped", fatal=True)
    none_break = Break(
        gb_id="GB0236", gb_type="Invalid input type for nonstrict_trace-ed function",
        reason="Invalid input type for nonstrict_trace-ed function", detail="Encountered input of type <NoneType>.",
        count=1, fatal=False, location=loc(middle), stack=(loc(compiled_entry), loc(middle)),
    )
    later = brk([loc(compiled_entry), loc(other_leaf)], gb="GB0026", reason="Attempted to call function marked as skipped")
    made = []

    def adapt(qualname, function, caller_files):
        made.append((qualname, function))
        return FakeAdapter(qualname)

    table = Table({
        frozenset({"leaf"}): ((none_break, later), MATCH),  # compiles now, but the mark falls back (GB0236)
        frozenset({"leaf", "other_leaf"}): ((none_break,), MATCH),  # the break revealed behind it, removed
        frozenset({"adapter-leaf", "other_leaf"}): ((), MATCH),  # the adapter instead of the mark
    }, ((fatal,), MATCH))
    base = run("baseline", fatal, error="TorchRuntimeError: RuntimeError when making fake tensor call")
    cands, rec = run_advisor(base, resolve, table, budget_s=10, max_attempts=3, adapt=adapt)
    got = by_fn(cands)
    assert made == [("leaf", leaf)]
    assert [(c.function, c.kind, c.status, c.breaks_before, c.breaks_after) for c in cands] == [
        ("leaf", "nonstrict", "improved", 1, 2),
        ("middle", "nonstrict", "skipped", None, None),
        ("adapter: leaf", "adapter", "improved", 1, 0),
        ("other_leaf", "nonstrict", "improved", 2, 1),
    ]
    assert [names for _, names in table.calls] == [  # the adapter is tried without the mark it replaces
        frozenset({"leaf"}), frozenset({"leaf", "other_leaf"}), frozenset({"adapter-leaf", "other_leaf"}),
    ]
    assert got["adapter: leaf"].why == (
        "the mark of leaf falls back to eager on None inputs (GB0236): tried through an adapter instead"
        "; note: it calls print (line 29): traced non-strictly under aot_eager or inductor, the print runs"
        " only while the function is traced (the first call), never on later calls"
    )
    assert got["leaf"].error.endswith("; replaced by adapter: leaf, which did better")
    assert (rec.functions, rec.adapters, rec.breaks_before, rec.breaks_after) == (("other_leaf",), ("leaf",), 1, 0)
    assert "\ntest_advisor_logic.leaf = _leaf_adapter\n" in rec.code


def test_an_item_break_gets_its_config_flag_first_and_later_marks_keep_it():
    b_item = brk([loc(compiled_entry), loc(other_leaf)], gb="GB0124", reason="Unsupported Tensor.item() call")
    calls = []

    def try_config(marks, flags, run_name):
        names = frozenset(getattr(m, "__qualname__", "?") for m in marks)
        calls.append((run_name, names, dict(flags)))
        left = [] if flags.get("capture_scalar_outputs") else [b_item]
        left += [] if "leaf" in names else [B_LEAF]
        return run(run_name, *left), MATCH

    def try_marks(marks, run_name):
        return try_config(marks, {}, run_name)

    base = run("baseline", B_LEAF, b_item)
    cands, rec = run_advisor(base, resolve, try_marks, try_config=try_config, budget_s=60, max_attempts=10)
    assert calls[0] == ("attempt-1", frozenset(), {"capture_scalar_outputs": True})  # before any mark
    assert all(flags == {"capture_scalar_outputs": True} for _, _, flags in calls[1:])  # kept for the rest
    assert by_fn(cands)["config: capture_scalar_outputs=True"].status == "improved"
    gone = by_fn(cands)["other_leaf"]  # its break is gone with the flag: not tried
    assert gone.status == "skipped" and "not needed" in gone.error
    assert all("other_leaf" not in names for _, names, _ in calls)
    assert rec is not None and rec.config == ("capture_scalar_outputs",) and rec.functions == ("leaf",)
    assert rec.graphs_before == 3 and rec.graphs_after == 1
    assert "torch._dynamo.config.capture_scalar_outputs = True" in rec.code


def test_a_config_flag_that_reveals_a_new_break_in_a_function_gets_that_function_tried():
    b_item = brk([loc(compiled_entry), loc(other_leaf)], gb="GB0124", reason="Unsupported Tensor.item() call")
    b_item2 = brk([loc(compiled_entry), loc(other_leaf, 2)], gb="GB0124", reason="Unsupported Tensor.item() call")
    b_new = brk([loc(compiled_entry), loc(other_leaf, 2)], gb="GB0026", reason="Attempted to call function marked as skipped")
    calls = []

    def try_config(marks, flags, run_name):
        names = frozenset(getattr(m, "__qualname__", "?") for m in marks)
        calls.append((run_name, names, dict(flags)))
        if not flags.get("capture_scalar_outputs"):
            return run(run_name, b_item, b_item2, B_LEAF), MATCH
        return run(run_name, *([] if "other_leaf" in names else [b_new]), B_LEAF), MATCH

    cands, rec = run_advisor(
        run("baseline", b_item, b_item2, B_LEAF), resolve, lambda m, n: try_config(m, {}, n), try_config=try_config,
        budget_s=60, max_attempts=10,
    )
    got = by_fn(cands)
    assert got["config: capture_scalar_outputs=True"].status == "improved"  # 4 -> 3 graphs, a new break in other_leaf
    # its .item() breaks are gone, a new one came: other_leaf is tried for it (not passed over as not needed)
    assert got["other_leaf"].status == "improved" and got["other_leaf"].run is not None
    assert ("attempt-2", frozenset({"other_leaf"}), {"capture_scalar_outputs": True}) in calls
    assert rec is not None and "other_leaf" in rec.functions and rec.config == ("capture_scalar_outputs",)


class _Elsewhere:
    """Trials whose graph count on another input set and random state is given."""

    def __init__(self, table, counts):
        self.table, self.counts, self.asked = table, counts, []
        self.resolve, self.try_marks = resolve, table
        self.try_config = self.adapt = self.register = None
        self.other_inputs = self.run_eager = self.time_attempt = self.deadline = None
        self.decorator, self.none_inputs_ok = "torch._dynamo.nonstrict_trace", False

    def graphs_elsewhere(self, marks, flags, given_inputs=False):
        self.asked.append((tuple(getattr(m, "__qualname__", "?") for m in marks) + ("given",) * given_inputs,
                           dict(flags)))
        written, remedied, *given = self.counts
        return given[0] if given_inputs else remedied if marks or flags else written


def test_the_count_that_can_settle_the_other_input_check_is_made_first():
    from nstviz.advisor.steps import _no_drop, _not_confirmed_elsewhere

    def leaf(x):
        return x

    leaf.__qualname__ = "leaf"
    ok = run("baseline", B_LEAF, B_STATS)  # 3 graphs
    failed = run("baseline", B_LEAF, error="TorchRuntimeError: sizes differ", graphs=2)
    crash = RuntimeError("PendingUnbackedSymbolNotFound: Pending unbacked symbols {u0}")
    raised = ("on another input set, compiled with Dynamo's eager backend (as torch._dynamo.explain compiles), it "
              "raises where the code as written does not: RuntimeError: PendingUnbackedSymbolNotFound: Pending "
              "unbacked symbols {u0}")
    given = ("compiled with Dynamo's eager backend (as torch._dynamo.explain compiles), it raises on the inputs "
             "given: RuntimeError: PendingUnbackedSymbolNotFound: Pending unbacked symbols {u0}")
    out_of_time = ("on another input set, compiled with Dynamo's eager backend (as torch._dynamo.explain compiles), "
                   "it raises (RuntimeError: PendingUnbackedSymbolNotFound: Pending unbacked symbols {u0}), and the "
                   "time budget ran out before the check could compile it on the inputs given")
    for base, counts, asked, verdict in [
        (ok, (3, 2), [("leaf",)], None),  # fewer than the baseline's 3: a drop, as written not compiled
        (ok, (3, 3), [("leaf",), ()], _no_drop(3, 3)),
        (ok, (4, 3), [("leaf",), ()], None),  # another path as written: no verdict
        (ok, (3, crash, 2), [("leaf",), ("leaf", "given"), ()], raised),  # explain of the pasted code would raise
        (ok, (crash, crash, 2), [("leaf",), ("leaf", "given"), ()], None),  # as written raises there too
        (ok, (None, crash, 2), [("leaf",), ("leaf", "given"), ()], None),  # no time for it: the inputs given compile
        (ok, (crash, crash, crash), [("leaf",), ("leaf", "given")], given),  # ... on the inputs given: refused first
        (ok, (3, crash, None), [("leaf",), ("leaf", "given")], out_of_time),  # no time left: a raise is not passed
        (failed, (None, 1), [()], None),  # as written fails there too: no verdict, the remedy not compiled
        (failed, (2, 2), [(), ("leaf",)], _no_drop(2, 2)),
        (failed, (2, 1), [(), ("leaf",)], None),
    ]:
        trials = _Elsewhere(None, counts)
        assert _not_confirmed_elsewhere(trials, (leaf,), {}, base) == verdict
        assert [m for m, _ in trials.asked] == asked


def test_fewer_graphs_that_do_not_hold_on_other_inputs_are_not_recommended():
    from nstviz.advisor.search import search

    table = Table({frozenset({"leaf"}): ((B_STATS,), MATCH)}, ((B_LEAF, B_STATS), MATCH))
    base = run("baseline", B_LEAF, B_STATS)
    fewer = _Elsewhere(table, (3, 2))
    held = search(base, fewer, budget_s=60, max_attempts=10)
    assert held.recommendation is not None and held.recommendation.functions == ("leaf",)
    assert fewer.asked == [(("leaf",), {})]  # fewer graphs than the baseline's: the code as written is not compiled
    other_path = search(base, _Elsewhere(table, (2, 2)), budget_s=60, max_attempts=10)
    assert other_path.recommendation is not None  # other values take another path (2 graphs as written): no verdict
    luck = _Elsewhere(table, (3, 3))
    advice = search(base, luck, budget_s=60, max_attempts=10)
    assert luck.asked == [(("leaf",), {}), ((), {})]  # the recommended set, then (as many graphs) the code as written
    assert advice.recommendation is None
    leaf_cand = by_fn(advice.candidates)["leaf"]
    assert leaf_cand.status == "improved" and leaf_cand.error.endswith(
        "not recommended: on another input set and random state the graphs do not drop (3 -> 3): "
        "the graph count depends on the values"
    )
    assert len(advice.candidates) == len({c.function for c in advice.candidates})  # each candidate once


# user code for the numpy-return check, last in the file (the tests above name line numbers) ------

import numpy as np  # noqa: E402


def np_mask(x):
    return np.arange(x.shape[0]) % 2 == 0  # a numpy array: no mark can return it


def np_scale(x):
    return x * np.float64(2.0)  # uses numpy, returns a tensor


def uses_np_mask(x):
    return np_scale(x)[torch.as_tensor(np_mask(x))]


NAMESPACE.update(np_mask=np_mask, np_scale=np_scale, uses_np_mask=uses_np_mask)
