"""The parts of a Report: frozen dataclasses of JSON-native values, and the closed vocabularies once.

This module imports nothing of nstviz but :mod:`nstviz.report.timing` (the timing parts),
:mod:`nstviz.report.location` and :mod:`nstviz.report.compiles` (the per-compile records): the :class:`~nstviz.report.document.Report` that holds
these parts is in :mod:`nstviz.report.document`. The glossary is in the package's docstring
(:mod:`nstviz.report`). Fields marked ``derived`` (``init=False``) are computed from the other
fields when the value is made, written to JSON for the viewer, and never read back.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

from nstviz.report.compile_id import CompileId  # (read from here too)
from nstviz.report.compiles import Compile, GuardFailure  # noqa: F401 (read from here too)
from nstviz.report.location import Location  # (read from here too)
from nstviz.report.timing import RunTiming

SCHEMA_VERSION = 3
"""Version of the Report JSON schema. Bump on any incompatible change."""

NodeOp = Literal["placeholder", "get_attr", "call_function", "call_method", "call_module", "output"]
Level = Literal["dynamo", "aten_forward", "aten_backward", "aten_inference", "inductor_post_grad"]
BreakStatus = Literal["resolved", "remaining", "introduced"]
CandidateStatus = Literal[
    "improved",  # fewer graphs (or frames run eagerly, or it compiles now), outputs verified: kept
    "no_change",  # ran, no improvement (the break moved; same graphs)
    "worse",  # more breaks or graphs, or outputs differ
    "failed",  # the nonstrict run raised (e.g. GB0236 non-pytree input, GB0251)
    "rejected",  # a pre-check failed, not run
    "skipped",  # budget (time / attempts) exhausted before trying it
]
ReadKind = Literal["global", "closure", "self_attribute", "randomness", "nonlocal_mutation"]
Tone = Literal["good", "bad", "neutral"]
ChipKind = Literal["breaks", "graphs", "failure", "outputs", "note"]
ErrorKind = Literal["user", "dynamo", "clean_exit"]
"""What a run's exception was (:attr:`Run.error_kind`): ``"user"`` (the user's code raised,
``sys.exit`` with a failing status too), ``"dynamo"`` (one of torch's Dynamo exceptions: how a
fatal graph break surfaces), ``"clean_exit"`` (``SystemExit`` with status 0 or None)."""

_FRZ = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**_FRZ)
class TensorInfo:
    """Shape/dtype/device of one value a node produces (a FakeTensor's metadata)."""

    shape: tuple[int | str, ...]
    """Sizes; symbolic sizes are strings such as ``"s0"``."""
    dtype: str
    """Short dtype name, e.g. ``"f32"``, ``"i64"``, ``"bf16"``."""
    device: str
    requires_grad: bool = False


@dataclass(**_FRZ)
class Node:
    """One FX node.

    ``inputs`` are the names of nodes in the same graph this node reads (the edges).
    ``stack`` indexes :attr:`Report.stacks` (interned user stacks, innermost frame last).
    ``region`` is the id of the non-strict region the node was inlined from, or ``None``.
    """

    name: str
    op: NodeOp
    target: str
    inputs: tuple[str, ...] = ()
    region: str | None = None
    tensors: tuple[TensorInfo, ...] = ()
    """Metadata of the values produced (one for a tensor, several for a tuple output)."""
    value: str | None = None
    """Short text of a non-tensor value (a SymInt, a constant, a TreeSpec), where useful."""
    stack: int | None = None
    module: str | None = None
    """``nn_module_stack`` path of the innermost module, dotted (``"blocks.0.attn"``)."""
    module_type: str | None = None
    """Class name of that module, e.g. ``"Attention"``."""
    from_node: str | None = None
    """ATen graphs: the Dynamo node this node came from (``node.meta["from_node"]``)."""
    baseline_graph: str | None = None
    """Nonstrict ATen graphs: the baseline Dynamo graph that computed this op (the same op from the
    same source line, in the same call), or None when no baseline graph can honestly be named
    (:func:`nstviz.passes.provenance.assign_baseline_graphs`)."""
    param: str | None = None
    """Placeholders: the module parameter or buffer it stands for, dotted (``"blocks.0.proj.weight"``),
    where the graph's inputs say so (Dynamo's lifted names; ATen ``primals``/``arg`` by position)."""
    nonstrict_call: bool = False
    """True for the opaque Dynamo node that stands for a non-strict call."""
    extra: dict[str, str] = field(default_factory=dict)
    """Any other readable meta (``seq_nr``, ``original_aten``, ``source_fn``...)."""


@dataclass(**_FRZ)
class Graph:
    """One compiled FX graph at one level.

    ``id`` is unique within the run, e.g. ``"0/0:dynamo"``, ``"0/0:aten_forward"``, built from
    tlparse's ``frame_id/compile_id`` (``"0/0_1"`` when ``attempt`` > 0).
    """

    id: str
    level: Level
    frame_id: int
    compile_id: int
    attempt: int = 0
    nodes: tuple[Node, ...] = ()
    function: str | None = None
    """The user function whose frame was compiled (``co_name``)."""
    code: str | None = None
    """Readable Python of the graph (``print_readable``), where it was kept."""
    op_count: int = 0
    """Number of ``call_*`` nodes (ops), counted before any truncation."""
    truncated: bool = False
    """True when ``nodes`` holds only part of the graph (see :attr:`Report.notes`)."""


@dataclass(**_FRZ)
class BreakSplit:
    """One compiled frame whose graph a break split (a graph break Dynamo counted there).

    ``compile_id`` is the frame compile (tlparse's ``"1/0"``, ``"1/0_1"`` for a restart
    attempt); ``function`` the frame's function, qualified where the source tells
    (``"Block.forward"``); a Dynamo resume function is named by the function it resumes.
    """

    compile_id: CompileId
    function: str = ""
    count: int = 1
    """Graph breaks Dynamo counted for the break in this frame compile (almost always 1)."""

    def __post_init__(self) -> None:
        if not isinstance(self.compile_id, CompileId):  # written by hand as text
            object.__setattr__(self, "compile_id", CompileId.coerce(self.compile_id))


@dataclass(**_FRZ)
class Break:
    """One distinct graph break, reached ``count`` times, causing ``caused`` graph breaks.

    ``location`` is the innermost user frame; ``stack`` the full user stack (outermost first).
    ``gb_id`` is the registry id (``"GB0026"``) where torch reports one. ``id`` is the break's
    identity (:func:`break_id`), filled in when the Break is made and never recomputed.
    """

    id: str = field(default="", metadata={"required": True})
    """Stable identity, ``"file:line:function:GBxxxx"`` (or ``...:r<hash of the reason>``)."""

    gb_id: str | None
    reason: str
    count: int
    fatal: bool
    location: Location
    gb_type: str | None = None
    """The registry's short type, e.g. ``"Call to `torch._dynamo.graph_break()`"``."""
    detail: str = ""
    """The full message torch printed."""
    explanation: str | None = None
    hints: tuple[str, ...] = ()
    link: str | None = None
    stack: tuple[Location, ...] = ()
    compile_ids: tuple[CompileId, ...] = ()
    """The compiles that hit this break (tlparse's ``"0/0"``), first seen first."""
    graph_before: str | None = None
    """Graph that ends at this break (the last graph compiled before it), where known."""
    graph_after: str | None = None
    """Graph that starts after it (the resume function's graph), where known."""
    root_cause: str | None = None
    """For errors converted by torch (GB0251), the underlying exception, e.g. a data-dependent op."""
    caused: int | None = None
    """Graph breaks it caused: its share of Dynamo's ``torch._dynamo.utils.counters["graph_break"]``
    (summed over a run's breaks: :attr:`Run.dynamo_graph_breaks`). ``count`` is how often Dynamo's
    tracing reached it (tlparse's graph-break entries). None in Reports made before nstviz knew."""
    splits: tuple[BreakSplit, ...] = ()
    """The frame compiles whose graph it split, one entry per compile (sum of counts = ``caused``)."""
    advice: str | None = None
    """What else can remove it when nonstrict_trace did not (a call into C/builtin code: a custom
    op or a Python polyfill), set on breaks that remain (:mod:`nstviz.passes.break_advice`)."""

    tally: BreakTally = field(init=False, metadata={"derived": True})
    """Its counts and their texts, computed from the fields above when the Break is made."""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", break_id(self.location, self.gb_id, self.reason))
        if not all(isinstance(c, CompileId) for c in self.compile_ids):  # written by hand as text
            object.__setattr__(self, "compile_ids", tuple(CompileId.coerce(c) for c in self.compile_ids))
        object.__setattr__(self, "tally", _tally(self))


@dataclass(**_FRZ)
class BreakTally:
    """The two counts of one break and the texts every renderer shows (the viewer too).

    ``caused``: graph breaks it caused (:attr:`Break.caused`); for Reports made before nstviz
    measured it, estimated (``exact`` False) as the distinct frames that logged the break.
    ``reached``: times Dynamo's tracing reached it (:attr:`Break.count`).
    """

    reached: int
    caused: int
    exact: bool = True
    caused_text: str = ""
    """``"caused 4 graph breaks"`` (``"caused ~3 ..."`` when estimated, ``"stopped the compile"``)."""
    splits_text: str = ""
    """``"TinyNet.forward 0/0, Block.forward 1/0 1/1"``: the frame compiles it split."""
    counts_text: str = ""
    """``"caused 4 graph breaks (TinyNet.forward 0/0, ...), reached 4×"``: the summary's line."""
    short_text: str = ""
    """``"caused 4 graph breaks, reached 4×"`` (``"fatal, reached 1×"``): one-line lists."""


def _tally(b: Break) -> BreakTally:
    """The counts of ``b`` (``caused`` estimated where the Report does not record it) and their texts."""
    reached, exact = b.count, True
    if b.caused is not None:
        caused = b.caused
    elif b.fatal:  # a fullgraph error stops the compile: Dynamo counts no graph break for it
        caused = 0
    else:
        frames = {c.frame_id for c in b.compile_ids}
        caused, exact = len(frames) if frames else (1 if reached else 0), False
        caused = min(caused, reached) if reached else caused
    by_fn: dict[str, list[str]] = {}
    for s in b.splits:  # a compile split more than once is written once with its count ("4/0×3")
        by_fn.setdefault(s.function or "?", []).append(s.compile_id.text + (f"×{s.count}" if s.count > 1 else ""))
    splits = ", ".join(f"{fn} {' '.join(ids)}" for fn, ids in by_fn.items())
    graph_breaks = f"graph break{'' if caused == 1 else 's'}"
    if b.fatal and not caused:
        caused_text, long, short = "stopped the compile", "stopped the compile (fullgraph)", "fatal"
    else:
        caused_text = f"caused {'' if exact else '~'}{caused} {graph_breaks}"
        long = f"caused {caused} {graph_breaks}" + ("" if exact else " (estimated)") + (f" ({splits})" if splits else "")
        short = caused_text
    return BreakTally(
        reached=reached, caused=caused, exact=exact, caused_text=caused_text, splits_text=splits,
        counts_text=f"{long}, reached {reached}×", short_text=f"{short}, reached {reached}×",
    )


def break_rank_key(b: Break) -> tuple[int, int, bool]:
    """The one order of breaks: most graph breaks caused, then most reached, fatal first (then first seen)."""
    return (-b.tally.caused, -b.tally.reached, not b.fatal)


def break_id(location: Location, gb_id: str | None, reason: str) -> str:
    """The identity of a distinct break: where it happened and what it is.

    ``"file:line:function:GB0026"``; with no GB id, the reason's hash stands for it
    (``"...:r1a2b3c4d5e"``). Two hits with the same id are the same distinct break, in one
    run and across runs (the break diff, the advisor and the viewer match on it).
    """
    what = gb_id or "r" + hashlib.sha1(reason.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{location.file}:{location.line}:{location.function}:{what}"


@dataclass(**_FRZ)
class NonInputRead:
    """A value a non-strict function reads that is not one of its inputs.

    nonstrict_trace bakes such values in as constants without guards: if the code changes
    them later, the compiled code silently uses the old value.
    """

    name: str
    kind: ReadKind
    line: int | None = None
    detail: str = ""


@dataclass(**_FRZ)
class Region:
    """One call site of a function traced non-strictly.

    ``nodes`` maps graph id to the names of the nodes inlined from this call (ATen level),
    from node provenance. ``call_node`` is the opaque Dynamo node (graph id, node name).
    """

    id: str
    function: str
    """Qualified name of the marked function."""
    nodes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    file: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    call_site: Location | None = None
    call_graph: str | None = None
    call_node: str | None = None
    reads: tuple[NonInputRead, ...] = ()
    approximate: bool = False
    """True when the region was recovered from a TORCH_TRACE log (``nstviz ingest``): its ATen
    nodes are those carrying the call site's ``# File:`` line, not exact node provenance."""


@dataclass(**_FRZ)
class MarkedFunction:
    """A function the run traced non-strictly, how it was named, and whether it took effect."""

    spec: str
    """What the user asked for (``"Block.stats"``) or ``"<source>"`` for marks in the code."""
    qualname: str
    file: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    origin: Literal["requested", "in_source", "advisor"] = "requested"
    applied: bool = True
    """False when the function was marked but no call went through the non-strict path."""
    reads: tuple[NonInputRead, ...] = ()
    warning: str | None = None
    decorator: Literal["nonstrict_trace", "leaf_function"] = "nonstrict_trace"
    """How the function is made opaque: ``nonstrict_trace`` (every mark nstviz makes, and
    ``@torch.compiler.nonstrict_trace`` / ``@torch._dynamo.nonstrict_trace`` in the code), or
    ``leaf_function`` (``@torch._dynamo.decorators.leaf_function`` in the code: its body runs
    eagerly at run time, after a ``register_fake`` shape function at compile time)."""


@dataclass(**_FRZ)
class Run:
    """One execution of the user's code under capture."""

    name: str
    graphs: tuple[Graph, ...] = ()
    breaks: tuple[Break, ...] = ()
    regions: tuple[Region, ...] = ()
    compiles: tuple[Compile, ...] = ()
    marked: tuple[MarkedFunction, ...] = ()
    error: str | None = None
    """The exception the user's code raised in this run (type and message), if any."""
    error_type: str | None = None
    error_kind: ErrorKind | None = None
    """What the exception was (:data:`ErrorKind`), decided by the capture with the running torch's
    Dynamo exceptions; None when the run did not raise, and in Reports made before nstviz said."""
    error_traceback: str | None = None
    stdout: str = ""
    stderr: str = ""
    wall_time_s: float = 0.0
    rank: int | None = None
    """Distributed rank of the process that ran (``RANK``), for runs recorded or ingested offline."""
    world_size: int | None = None
    origin: Literal["record", "torch_trace"] | None = None
    """Where an offline run came from: ``"record"`` (``nstviz record``) or ``"torch_trace"``
    (``nstviz ingest`` of a TORCH_TRACE log); None for runs captured in-process."""
    log_stats: dict[str, int] = field(default_factory=dict)
    """Ingested runs: entries read, skipped (corrupt), unknown and truncated, by name."""
    dynamo_graph_breaks: int | None = None
    """Graph breaks Dynamo itself counted in this run (``counters["graph_break"]``), where known."""
    graph_runs: tuple[str, ...] = ()
    """Ids of the Dynamo graphs in the order their compiled code ran (the first 10,000 runs);
    empty where not recorded (ingested runs, Reports made before nstviz kept it). Tells which
    graph computed which call of a function compiled more than once (one block of a model
    by ``1/0``, the next by its recompile ``1/1``)."""
    timing: RunTiming | None = None
    """What this run costs, measured (:mod:`nstviz.report.timing`): graphs, compile time,
    steady-state time per call, eager alongside; None when it was not timed (cells without
    ``--time``, offline runs, Reports made before nstviz timed)."""
    break_order: tuple[int, ...] = field(init=False, metadata={"derived": True})
    """Indices into :attr:`breaks`, ranked (:func:`break_rank_key`, then first seen): the order
    every list of breaks is shown in. Computed when the Run is made."""

    def __post_init__(self) -> None:
        order = sorted(range(len(self.breaks)), key=lambda i: break_rank_key(self.breaks[i]))
        object.__setattr__(self, "break_order", tuple(order))


@dataclass(**_FRZ)
class BreakDiff:
    """Distinct breaks, baseline vs nonstrict, matched by :attr:`Break.id`."""

    resolved: tuple[Break, ...] = ()
    remaining: tuple[Break, ...] = ()
    introduced: tuple[Break, ...] = ()


@dataclass(**_FRZ)
class RunCounts:
    """Headline numbers of one run."""

    graphs: int
    breaks: int
    break_hits: int
    """Times Dynamo's tracing reached a break (the sum of :attr:`Break.count`; tlparse's entries)."""
    ops: int
    aten_ops: int
    regions: int
    inlined_nodes: int
    full_graph: bool
    graph_breaks: int | None = None
    """Graph breaks Dynamo counted (``counters["graph_break"]``): :attr:`Run.dynamo_graph_breaks`
    where measured, else the sum of :attr:`Break.caused`; None when neither is known."""


@dataclass(**_FRZ)
class Chip:
    """One part of the headline: ``kind`` says what it is about, ``tone`` how it reads.

    ``kind``: ``"breaks"`` (distinct breaks baseline -> nonstrict), ``"graphs"`` (Dynamo
    graphs baseline -> nonstrict, or the baseline's failure -> graphs), ``"failure"`` (a run
    raised), ``"outputs"`` (the output verdict), ``"note"`` (no baseline run). ``tone``:
    ``"good"`` (an improvement), ``"bad"`` (a regression: more breaks, the nonstrict run
    raised, outputs differ), ``"neutral"``.
    """

    kind: ChipKind
    text: str
    tone: Tone = "neutral"
    help: str | None = None
    """What the chip means (the viewer's tooltip); ``run`` and ``compile_id`` name the compile it is about."""
    run: str | None = None
    compile_id: CompileId | None = None

    def __post_init__(self) -> None:
        if self.compile_id is not None and not isinstance(self.compile_id, CompileId):  # written by hand as text
            object.__setattr__(self, "compile_id", CompileId.coerce(self.compile_id))


@dataclass(**_FRZ)
class Headline:
    """What the Report says first, computed once (:mod:`nstviz.passes.headline`).

    ``chips`` in display order; ``text`` is the chips' texts joined by ``", "``, the one-line
    form used by :meth:`Report.summary`, the CLI and the widget's plain-text summary.
    """

    chips: tuple[Chip, ...] = ()
    text: str = ""
    nothing_marked: bool = False
    """No function was marked (and no remedy recommended), so the nonstrict run was not made."""


@dataclass(**_FRZ)
class RankView:
    """One more rank of an offline diff (``nstviz diff``): its runs, break diff and counts.

    :attr:`Report.runs` holds the rank named by :attr:`Report.rank`; each other rank is one
    ``RankView`` in :attr:`Report.ranks`. Node stacks index the same :attr:`Report.stacks`.
    """

    rank: int
    runs: dict[str, Run] = field(default_factory=dict)
    diff: BreakDiff = field(default_factory=BreakDiff)
    counts: dict[str, RunCounts] = field(default_factory=dict)
    headline: Headline = field(default_factory=Headline)
    """This rank's headline, computed by the same pass as :attr:`Report.headline`."""


@dataclass(**_FRZ)
class Finding:
    """Something an offline diff found across ranks, e.g. ranks that compiled differently.

    ``kind``: ``"ranks_differ"`` (different graphs, breaks or recompiles on some ranks) or
    ``"rank_missing"`` (a rank present in one input only). ``run`` names the run concerned.
    """

    kind: Literal["ranks_differ", "rank_missing"]
    message: str
    ranks: tuple[int, ...] = ()
    run: str | None = None
    details: tuple[str, ...] = ()


@dataclass(**_FRZ)
class OutputDetail:
    """Comparison of one output value (``path`` names it, e.g. ``"return[0]"``, ``"y"``)."""

    path: str
    match: bool | None
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    shape: str | None = None
    dtype: str | None = None
    note: str = ""


@dataclass(**_FRZ)
class OutputComparison:
    """One pairwise comparison of run outputs, e.g. ``baseline`` vs ``nonstrict``."""

    left: str
    right: str
    match: bool | None
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    details: tuple[OutputDetail, ...] = ()


@dataclass(**_FRZ)
class OutputCheck:
    """Whether the runs' outputs agree.

    ``match``/``max_abs_diff`` summarise baseline vs nonstrict; ``comparisons`` holds every
    pair checked (vs eager too, for ``compare``).
    """

    match: bool | None
    max_abs_diff: float | None = None
    max_rel_diff: float | None = None
    details: tuple[OutputDetail, ...] = ()
    comparisons: tuple[OutputComparison, ...] = ()
    nondeterministic: bool = False
    """True when the baseline disagreed with itself (or eager with eager) on a re-run."""
    skipped_reason: str | None = None


@dataclass(**_FRZ)
class Candidate:
    """A function the advisor proposed to trace non-strictly, and what trying it did."""

    function: str
    why: str
    status: CandidateStatus
    file: str | None = None
    line: int | None = None
    precheck: tuple[str, ...] = ()
    """Problems found before running (empty when the pre-checks passed)."""
    run: str | None = None
    """Name of the run that tried it (``"attempt-1"``), when it ran."""
    breaks_before: int | None = None
    breaks_after: int | None = None
    outputs_match: bool | None = None
    error: str | None = None
    gb_id: str | None = None
    elapsed_s: float | None = None
    kind: Literal["nonstrict", "config", "adapter", "pytree", "rewrite"] = "nonstrict"
    """``"nonstrict"``: trace ``function`` non-strictly; ``"config"``: set the config flags in ``code``;
    ``"adapter"``: trace it through an adapter that drops its ``None`` arguments (``code``);
    ``"pytree"``: register a user class with ``torch.utils._pytree`` and trace the function (``code``)."""
    code: str | None = None
    """The exact code this attempt applied (for config remedies), where it is not just the mark."""


@dataclass(**_FRZ)
class Recommendation:
    """The advisor's final set, with the code to apply it."""

    functions: tuple[str, ...]
    code: str
    breaks_before: int
    breaks_after: int
    outputs_match: bool | None
    config: tuple[str, ...] = ()
    """``torch._dynamo.config`` flags set to True by the verified attempt (``code`` sets them too)."""
    adapters: tuple[str, ...] = ()
    """Functions traced non-strictly through an adapter that drops their ``None`` arguments."""
    pytree: tuple[str, ...] = ()
    """User classes (``module.Class``) registered with ``torch.utils._pytree`` (``code`` does it)."""
    graph_breaks_before: int | None = None
    """Dynamo's own graph-break count (``counters["graph_break"]``) of the baseline, and ..."""
    graph_breaks_after: int | None = None
    """... of the verified attempt: what a lower count of distinct breaks alone may not show."""
    graphs_before: int | None = None
    """Dynamo graphs of the baseline, and of the verified attempt (``graphs_after``)."""
    graphs_after: int | None = None
    eager_frames_before: int | None = None
    """Frames Dynamo gave up on (they run as Python) in the baseline, and in the verified attempt
    (``eager_frames_after``): with as many graphs, fewer of them is the improvement
    (:mod:`nstviz.passes.improvement`), which ``torch._dynamo.explain`` does not count."""
    eager_frames_after: int | None = None


@dataclass(**_FRZ)
class SourceFile:
    """Text of one user source file (or notebook cell) that the report refers to."""

    path: str
    text: str
    truncated: bool = False
