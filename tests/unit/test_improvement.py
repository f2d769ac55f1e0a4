"""The one predicate of an improvement (nstviz.passes.improvement) on hand-built runs, and its uses.

An improvement is fewer Dynamo graphs, else a failed compile that now compiles, and only with
the outputs verified. Fewer frames run eagerly with as many graphs, fewer distinct break sites or
a lower counters["graph_break"] alone is said as what it is, and not kept.
"""

from nstviz.advisor.search import run_advisor
from nstviz.passes.headline import build_headline
from nstviz.passes.improvement import eager_frames, improves, judge_change
from nstviz.report import Break, Compile, Graph, Location, OutputCheck, OutputComparison, Run, RunCounts

MATCH = OutputCheck(match=True, comparisons=(OutputComparison(left="baseline", right="nonstrict", match=True),))
DIFFER = OutputCheck(match=False, max_abs_diff=1.0)
UNCHECKED = OutputCheck(match=None, skipped_reason="the output check was turned off (check=False)")
LIMIT = Compile(
    frame_id=7, compile_id=8,
    fail_reason="Dynamo recompile limit exceeded\n  Explanation: exceeding the recompile_limit cache size limit (8).",
)


def site(line: int, fatal: bool = False, gb: str = "GB0033") -> Break:
    return Break(gb_id=gb, reason="r", count=1, fatal=fatal, location=Location(file="/m/modeling_x.py", line=line, function="f"))


def run(name: str, graphs: int, *breaks: Break, counted: int | None = None, compiles=(), error=None) -> Run:
    made = tuple(Graph(id=f"{i}/0:dynamo", level="dynamo", frame_id=i, compile_id=0) for i in range(graphs))
    aten = tuple(Graph(id=f"{i}/0:aten_forward", level="aten_forward", frame_id=i, compile_id=0) for i in range(graphs))
    return Run(
        name=name, graphs=made + aten + aten, breaks=breaks, dynamo_graph_breaks=counted, compiles=compiles, error=error
    )


def test_fewer_graphs_with_outputs_verified_is_an_improvement():
    change = judge_change(run("a", 20, site(1), site(2)), run("b", 18, site(1), site(2), site(3)), MATCH)
    assert (change.improved, change.kind, change.text) == (True, "fewer_graphs", "20 -> 18 graphs")


def test_graphs_are_dynamo_graphs_not_aten_graphs():
    # the ATen forward/backward graphs derived from each Dynamo graph are not counted
    assert judge_change(run("a", 3), run("b", 2), MATCH).text == "3 -> 2 graphs"


def test_fewer_sites_and_a_lower_counter_with_as_many_graphs_is_not_an_improvement():
    # SwitchTransformers: 5 distinct breaks -> 4, Dynamo's counter 14 -> 0, 20 graphs -> 20
    before = run("a", 20, *(site(i) for i in range(5)), counted=14)
    after = run("b", 20, *(site(i) for i in range(4)), counted=0)
    change = judge_change(before, after, MATCH)
    assert not improves(before, after, MATCH)
    assert (change.kind, change.text) == (
        "moved", "the break moved: modeling_x.py:4 no longer listed (same 20 graphs); breaks 5 -> 4, Dynamo counted 14 -> 0 graph breaks"
    )
    # the same sites, only the counter moved
    change = judge_change(run("a", 4, site(1), counted=3), run("b", 4, site(1), counted=1), MATCH)
    assert (change.improved, change.kind, change.text) == (False, "same", "same 4 graphs (Dynamo counted 3 -> 1 graph breaks)")


def test_a_break_that_moved_is_said_as_such():
    change = judge_change(run("a", 4, site(10)), run("b", 4, site(20)), MATCH)
    assert (change.improved, change.text) == (False, "the break moved: modeling_x.py:10 -> modeling_x.py:20 (same 4 graphs)")


def test_outputs_must_be_verified():
    assert judge_change(run("a", 5), run("b", 1), DIFFER).kind == "outputs_differ"
    change = judge_change(run("a", 5), run("b", 1), UNCHECKED)
    assert (change.improved, change.kind) == (False, "not_verified")
    assert change.text == "5 -> 1 graphs, but outputs not verified (the output check was turned off (check=False))"
    assert not improves(run("a", 5), run("b", 1), None)


def test_a_failed_compile_that_now_compiles_is_an_improvement():
    failed = run("a", 0, site(1, fatal=True), error="Unsupported: ...")
    change = judge_change(failed, run("b", 3, site(2)), MATCH)
    assert (change.improved, change.kind, change.text) == (True, "compiles_now", "the compile works now (3 graphs)")
    assert judge_change(run("a", 1), failed, MATCH).kind == "fails_now"
    # an eager reference that differs: not verified; no reference at all (trace_code): said so
    assert judge_change(failed, run("b", 3), DIFFER).kind == "outputs_differ"
    unchecked = judge_change(failed, run("b", 3), OutputCheck(match=None, skipped_reason="the baseline run raised"))
    assert (unchecked.improved, unchecked.text) == (True, "the compile works now (3 graphs); outputs not verified: no reference run")


def test_a_fatal_break_that_moved_on_is_not_an_improvement():
    change = judge_change(run("a", 0, site(1, fatal=True), error="e"), run("b", 0, site(9, fatal=True), error="e"), MATCH)
    assert (change.improved, change.text) == (False, "the break moved: modeling_x.py:1 -> modeling_x.py:9; the compile still fails")


def test_fewer_frames_run_eagerly_with_as_many_graphs_is_reported_but_not_an_improvement():
    assert eager_frames(run("a", 2, compiles=(LIMIT,))) == 1
    change = judge_change(run("a", 2, compiles=(LIMIT,)), run("b", 2), MATCH)
    assert (change.improved, change.kind) == (False, "fewer_eager_frames")
    assert change.text == "1 fewer frame(s) run eagerly, but the same 2 graphs: not an improvement"


def test_fewer_graphs_because_a_frame_gave_up_is_not_an_improvement():
    gave_up = Compile(frame_id=3, compile_id=0, function="g", fail_reason="Unsupported: something")
    change = judge_change(run("a", 6), run("b", 5, compiles=(gave_up,)), MATCH)
    assert (change.improved, change.kind, change.text) == (False, "more_eager_frames", "1 more frame(s) run eagerly (6 -> 5 graphs)")


def counts(run_: Run) -> RunCounts:
    from nstviz.passes.counts import run_counts

    return run_counts(run_)


def test_headline_says_same_graphs_and_is_not_green():
    base = run("baseline", 20, *(site(i) for i in range(5)), counted=14)
    nonstrict = run("nonstrict", 20, *(site(i) for i in range(4)), counted=0)
    runs = {"baseline": base, "nonstrict": nonstrict}
    h = build_headline(runs, {k: counts(v) for k, v in runs.items()}, MATCH)
    assert [(c.text, c.tone) for c in h.chips] == [
        ("5 breaks → 4", "neutral"),
        ("20 graphs → 20", "neutral"),
        ("the break moved: modeling_x.py:4 no longer listed (same 20 graphs); breaks 5 -> 4, Dynamo counted 14 -> 0 graph breaks",
         "neutral"),
        ("outputs match", "good"),
    ]
    better = {"baseline": base, "nonstrict": run("nonstrict", 3, site(1), site(2))}
    h = build_headline(better, {k: counts(v) for k, v in better.items()}, MATCH)
    assert [(c.text, c.tone) for c in h.chips][:2] == [("5 breaks → 2", "good"), ("20 graphs → 3", "good")]
    h = build_headline(better, {k: counts(v) for k, v in better.items()}, UNCHECKED)
    assert [(c.text, c.tone) for c in h.chips][:2] == [("5 breaks → 2", "neutral"), ("20 graphs → 3", "neutral")]


# -- the advisor keeps an attempt only on an improvement -------------------------------------------


def leaf(x):
    print("breaks here")
    return x


def other(x):
    print("and here")
    return x


def entry(x):
    return other(leaf(x))


def loc(fn, offset=1):
    return Location(file=fn.__code__.co_filename, line=fn.__code__.co_firstlineno + offset, function=fn.__name__)


def brk(fn, fatal=False):
    return Break(gb_id="GB0059", reason="Failed to trace builtin operator", count=1, fatal=fatal,
                 location=loc(fn), stack=(loc(entry), loc(fn)))


ENTRY = (Compile(frame_id=0, compile_id=0, function="entry", location=loc(entry, 0)),)
NAMES = {"leaf": leaf, "other": other, "entry": entry}


def table_runs(table, default):
    def try_marks(marks, name):
        key = frozenset(m.__name__ for m in marks)
        graphs, breaks, error = table.get(key, default)
        return Run(name=name, graphs=run("x", graphs).graphs, breaks=breaks, compiles=ENTRY, error=error), MATCH
    return try_marks


def test_fewer_sites_same_graphs_is_not_kept_and_not_recommended():
    base = Run(name="baseline", graphs=run("x", 3).graphs, breaks=(brk(leaf), brk(other)), compiles=ENTRY)
    try_marks = table_runs({frozenset({"leaf"}): (3, (brk(other),), None)}, (3, (brk(leaf), brk(other)), None))
    cands, rec = run_advisor(base, NAMES.get, try_marks, budget_s=300, max_attempts=2)
    got = {c.function: (c.status, c.error) for c in cands}
    line = loc(leaf).line
    assert got["leaf"] == ("no_change", f"the break moved: test_improvement.py:{line} no longer listed (same 3 graphs); breaks 2 -> 1")
    assert rec is None


def test_a_moved_fatal_break_is_kept_on_trial_and_confirmed_when_the_code_compiles():
    fatal_leaf, fatal_other = brk(leaf, fatal=True), brk(other, fatal=True)
    base = Run(name="baseline", breaks=(fatal_leaf,), compiles=ENTRY, error="Unsupported: print")
    table = {
        frozenset({"leaf"}): (0, (fatal_other,), "Unsupported: print"),
        frozenset({"leaf", "other"}): (1, (), None),
    }
    cands, rec = run_advisor(base, NAMES.get, table_runs(table, (0, (fatal_leaf,), "Unsupported: print")),
                             budget_s=300, max_attempts=3)
    got = {c.function: (c.status, c.error) for c in cands}
    assert got["leaf"][0] == "improved" and "kept on trial" in got["leaf"][1]
    assert got["leaf"][1].endswith("; improved together with other: the compile works now (0 break(s) remain)")
    assert got["other"] == ("improved", "the compile works now (0 break(s) remain)")
    assert rec is not None and rec.functions == ("leaf", "other") and (rec.graphs_before, rec.graphs_after) == (0, 1)
    # nothing behind it compiles: the mark on trial is dropped, nothing is recommended
    table = {frozenset({"leaf"}): (0, (fatal_other,), "Unsupported: print")}
    cands, rec = run_advisor(base, NAMES.get, table_runs(table, (0, (fatal_other,), "Unsupported: print")),
                             budget_s=300, max_attempts=3)
    got = {c.function: (c.status, c.error) for c in cands}
    assert got["leaf"][0] == "no_change" and got["leaf"][1].endswith("; not kept: no later attempt made it compile")
    assert rec is None


def test_frames_dynamo_gave_up_on_run_eagerly():
    # loop_fn (tests/capture/cases/corpus.py) as recorded: the entry and the helper break before any
    # op, the resume in the entry is skipped; one graph, the helper's resume. Marked: one graph of all.
    base = run("a", 1, compiles=(
        Compile(frame_id=0, compile_id=0, function="loop_fn"),
        Compile(frame_id=1, compile_id=0, function="loop_helper"),
        Compile(frame_id=2, compile_id=0, function="torch_dynamo_resume_in_loop_helper_at_128", graph_ids=("2/0:dynamo",)),
        Compile(frame_id=3, compile_id=0, function="torch_dynamo_resume_in_loop_fn_at_133", fail_reason="skipped"),
    ))
    marked = run("b", 1, compiles=(Compile(frame_id=0, compile_id=0, function="loop_fn", graph_ids=("0/0:dynamo",)),))
    # frames 0 and 1 break before their first op (nothing ran eagerly before it); frame 3 gave up
    assert (eager_frames(base), eager_frames(marked)) == (1, 0)
    change = judge_change(base, marked, MATCH)
    assert (change.improved, change.kind, change.text) == (
        False, "fewer_eager_frames", "1 fewer frame(s) run eagerly, but the same 1 graph: not an improvement"
    )


SKIPPED = Compile(
    frame_id=0, compile_id=0, function="f",
    fail_reason="Unsupported Tensor.item() call\n\n*** While handling this graph break, another graph break occurred: ***\n\n"
    "graph break in loop\n  Explanation: ... Skipping the frame and falling back to eager ...\n"
    "  Developer debug context: frame skipped: f (<cell> line 3)",
)


def test_more_graphs_because_a_skipped_frame_now_compiles_is_an_improvement():
    # tests/users: a break inside a loop (GB7000) made Dynamo give the frame up (0 graphs)
    brk = Break(gb_id="GB0124", reason="r", count=1, fatal=False, compile_ids=("0/0",),
                location=Location(file="<cell>", line=7, function="f"))  # logged for that compile: not a failure
    before = run("baseline", 0, brk, compiles=(SKIPPED,))
    after = run("attempt-1", 1, compiles=(Compile(frame_id=0, compile_id=0, function="f", graph_ids=("0/0:dynamo",)),))
    change = judge_change(before, after, MATCH)
    assert (change.improved, change.kind) == (True, "eager_frames_compile")
    assert change.text == "1 frame(s) Dynamo ran eagerly compile now (0 -> 1 graphs)"
    assert not judge_change(before, after, DIFFER).improved
    # more distinct breaks as well: not this rule
    worse = run("attempt-2", 2, site(1), site(2), compiles=after.compiles)
    assert judge_change(before, worse, MATCH).kind == "more_graphs"
