"""The Report: everything nstviz captured about one cell or callable, as plain data.

A :class:`Report` is the one contract between the capture engine (kernel side) and every
renderer (widget, standalone HTML, CLI, outside tools). It holds JSON-native values only,
identifiers are strings, and it round-trips exactly through :meth:`Report.to_json` and
:meth:`Report.from_json`. The JSON carries ``schema_version``; the checked-in JSON Schema
(``nstviz/schema/report.schema.json``) is generated from these classes and kept equal to
them by a test.

Glossary (the closed vocabularies are documented here once):

- **run**: one execution of the user's code under capture. Run names: ``"baseline"`` (the
  code as written), ``"nonstrict"`` (with the chosen functions traced non-strictly), and, for
  the advisor, ``"attempt-N"``.
- **graph**: one compiled FX graph at a **level**: ``"dynamo"`` (what Dynamo hands the
  backend), ``"aten_forward"`` / ``"aten_backward"`` (AOTAutograd, when the code trains),
  ``"aten_inference"`` (AOTAutograd, no grad), ``"inductor_post_grad"`` (inductor's graph after
  its passes, when the inductor backend runs).
- **node**: one FX node; ``op`` is FX's closed set: ``placeholder``, ``get_attr``,
  ``call_function``, ``call_method``, ``call_module``, ``output``.
- **break**: one distinct graph break, identified by its user-code location and GB id (or, with
  no GB id, its reason): :func:`break_id` gives that identity as the string :attr:`Break.id`,
  once, when the break is captured; the diff, the advisor, the viewer and the CLI match breaks
  by it. Seen ``count`` times. A ``fatal`` break stopped compilation (``fullgraph=True``).
- **region**: one call site of a function traced non-strictly; the ATen nodes inlined from
  it are listed per graph.
- **break status** (diff): ``"resolved"`` (in baseline only), ``"remaining"`` (in both),
  ``"introduced"`` (in nonstrict only).
- **candidate**: a function the advisor proposed to trace non-strictly, with why and what
  trying it did.
- **counts** (:class:`RunCounts`): the headline numbers of a run. ``graphs`` and ``ops`` count
  the **Dynamo** graphs only (one per compiled region of user code), ``aten_ops`` the forward
  and inference ATen graphs. Computed once, by :mod:`nstviz.passes.counts`.
- **headline** (:class:`Headline`): the chips every renderer shows first (breaks before ->
  after, graphs before -> after, failures, the output verdict), each with its text and
  **tone** ``"good"|"bad"|"neutral"``. Computed once, by :mod:`nstviz.passes.headline`;
  the viewer, the widget's static summary, :meth:`Report.summary` and the CLI show it as is.

Schema history: version 2 added :attr:`Break.id`, :attr:`Report.headline`, made
:attr:`Report.counts` required and :attr:`Node.op` a closed set. :meth:`Report.from_json`
reads version 1 and upgrades it (ids, counts and headline are computed on the way in).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from nstviz.errors import ReportFormatError

SCHEMA_VERSION = 2
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

_FRZ = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**_FRZ)
class Location:
    """A place in user source: ``file`` path (or cell name), 1-based ``line``, ``function``."""

    file: str
    line: int
    function: str
    code: str | None = None
    """The source line itself, stripped, where known."""


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
    """Nonstrict ATen graphs: the baseline graph this node would have belonged to."""
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
class Compile:
    """One Dynamo compile of one frame (tlparse's ``[frame_id/compile_id]``)."""

    frame_id: int
    compile_id: int
    attempt: int = 0
    function: str = ""
    location: Location | None = None
    compile_time_s: float | None = None
    graph_ids: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()
    recompile_reason: str | None = None
    restart_reasons: tuple[str, ...] = ()
    fail_reason: str | None = None


@dataclass(**_FRZ)
class BreakSplit:
    """One compiled frame whose graph a break split (a graph break Dynamo counted there).

    ``compile_id`` is tlparse's id of the frame compile (``"1/0"``, ``"1/0_1"`` for a restart
    attempt); ``function`` the frame's function, qualified where the source tells
    (``"Block.forward"``); a Dynamo resume function is named by the function it resumes.
    """

    compile_id: str
    function: str = ""
    count: int = 1
    """Graph breaks Dynamo counted for the break in this frame compile (almost always 1)."""


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
    compile_ids: tuple[str, ...] = ()
    """tlparse ids of the compiles that hit this break (``"0/0"``)."""
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

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", break_id(self.location, self.gb_id, self.reason))


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
    error_traceback: str | None = None
    stdout: str = ""
    stderr: str = ""
    wall_time_s: float = 0.0
    rank: int | None = None
    """Distributed rank of the process that ran (``RANK``), for runs recorded or ingested offline."""
    world_size: int | None = None
    origin: str | None = None
    """Where an offline run came from: ``"record"`` (``nstviz record``) or ``"torch_trace"``
    (``nstviz ingest`` of a TORCH_TRACE log); None for runs captured in-process."""
    log_stats: dict[str, int] = field(default_factory=dict)
    """Ingested runs: entries read, skipped (corrupt), unknown and truncated, by name."""
    dynamo_graph_breaks: int | None = None
    """Graph breaks Dynamo itself counted in this run (``counters["graph_break"]``), where known."""


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


@dataclass(**_FRZ)
class Headline:
    """What the Report says first, computed once (:mod:`nstviz.passes.headline`).

    ``chips`` in display order; ``text`` is the chips' texts joined by ``", "``, the one-line
    form used by :meth:`Report.summary`, the CLI and the widget's plain-text summary.
    """

    chips: tuple[Chip, ...] = ()
    text: str = ""


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

    kind: str
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
    # -- issue 11 (added fields, all optional) --
    kind: Literal["nonstrict", "config", "adapter", "pytree"] = "nonstrict"
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
    # -- issue 11 (added field, optional) --
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


@dataclass(**_FRZ, weakref_slot=True)  # weakly referable: widgets and tests hold Reports weakly
class Report:
    """What nstviz captured: the runs, their comparison and the output check.

    Build it with :func:`nstviz.compare` or :func:`nstviz.trace_code`; load a saved one with
    :meth:`Report.from_json`. ``runs`` always has ``"baseline"`` and, unless the nonstrict run
    could not be started, ``"nonstrict"``.
    """

    torch_version: str
    runs: dict[str, Run]
    schema_version: int = SCHEMA_VERSION
    nstviz_version: str = ""
    python_version: str = ""
    created: str = ""
    """ISO 8601 time the capture started."""
    title: str = ""
    entry: Literal["compare", "trace_code", "cli", "demo"] = "trace_code"
    backend: str = "record"
    nonstrict: tuple[str, ...] = ()
    """The functions requested, as given (names or qualified names)."""
    baseline_mode: Literal["as_written", "strict"] = "as_written"
    counts: dict[str, RunCounts]
    """Headline numbers per run (every run has an entry)."""
    headline: Headline
    """The chips every renderer shows first."""
    diff: BreakDiff = field(default_factory=BreakDiff)
    outputs: OutputCheck = field(default_factory=lambda: OutputCheck(match=None))
    candidates: tuple[Candidate, ...] = ()
    recommendation: Recommendation | None = None
    stacks: tuple[tuple[Location, ...], ...] = ()
    """Interned user stacks; ``Node.stack`` indexes this (outermost frame first)."""
    sources: dict[str, SourceFile] = field(default_factory=dict)
    """User source text by path, for the viewer's source pane."""
    notes: tuple[str, ...] = ()
    """Warnings for the user (a mark that never applied, truncated graphs, ...)."""
    elapsed_s: float = 0.0
    rank: int | None = None
    """Offline diffs: the rank whose runs are in :attr:`runs`; the others are in :attr:`ranks`."""
    ranks: tuple[RankView, ...] = ()
    findings: tuple[Finding, ...] = ()
    """Cross-rank findings of an offline diff (ranks that compiled differently)."""

    @property
    def user_exception(self) -> BaseException | None:
        """The exception the user's code raised in the last run, live, or None.

        It is not part of the Report's data: it is kept beside the Report (see
        :mod:`nstviz._user_errors`) for the Report the capture returned, and a Report read from
        JSON or made by ``dataclasses.replace`` has None.
        """
        from nstviz._user_errors import user_exception

        return user_exception(self)

    def raise_user_error(self) -> None:
        """Re-raise the exception the user's code raised in the last run, if it raised one.

        The traceback is the original one, so a notebook shows it as a normal run would.
        Does nothing for a Report loaded from JSON or a run that succeeded.
        """
        exc = self.user_exception
        if exc is not None:
            raise exc.with_traceback(exc.__traceback__)

    # -- reading ---------------------------------------------------------------------------

    def summary(self) -> str:
        """A short plain-text summary of the runs and their comparison.

        The headline (``"3 breaks → 0, 4 graphs → 1, outputs match"``), then per run its
        graphs, breaks, ops, regions, and the output check.
        """
        from nstviz.render.summary import summary

        return summary(self)

    def validate(self) -> None:
        """Check internal consistency, like ``torch.fx.Graph.lint``.

        Graph ids unique per run, node names unique per graph, node inputs and region nodes
        exist, stack indices in range, counts name existing runs.

        Raises:
            ReportFormatError: listing every problem found.
        """
        from nstviz.render.summary import validate

        problems = validate(self)
        if problems:
            shown = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise ReportFormatError(f"the Report is inconsistent:\n  {shown}{more}")

    # -- serialisation -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return the Report as JSON-native data (dicts, lists, str, int, float, bool, None)."""
        return _encode(self)

    def to_json(self, *, indent: int | None = None) -> str:
        """Serialise to JSON text (see ``nstviz/schema/report.schema.json``)."""
        separators = (",", ": ") if indent is not None else (",", ":")
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False, separators=separators)
        # Lone surrogates (e.g. from an exception message) cannot be written as UTF-8: escape them.
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

    @classmethod
    def from_dict(cls, data: Any) -> Report:
        """Build a Report from :meth:`to_dict` data.

        Version 1 data is upgraded: break ids, counts and the headline are computed.

        Raises:
            ReportFormatError: the data is not a Report, or from a newer schema version.
        """
        if not isinstance(data, dict):
            raise ReportFormatError(f"a Report must be a JSON object, got {type(data).__name__}")
        version = data.get("schema_version")
        if not isinstance(version, int):
            raise ReportFormatError("not an nstviz Report: it has no integer 'schema_version'")
        if version > SCHEMA_VERSION:
            raise ReportFormatError(
                f"this Report has schema_version {version}, newer than this nstviz understands "
                f"({SCHEMA_VERSION}); upgrade nstviz (pip install -U nstviz) to read it"
            )
        if version < 1:
            raise ReportFormatError(f"unknown Report schema_version {version}")
        if version == 1:
            from nstviz.passes.upgrade import upgrade_v1

            return upgrade_v1(data)
        report = _decode(cls, data, "$")
        missing = [name for name in report.runs if name not in report.counts]
        if missing:
            raise ReportFormatError(f"$.counts: no counts for run(s) {', '.join(map(repr, missing))}")
        return report

    @classmethod
    def from_json(cls, text: str | bytes) -> Report:
        """Parse JSON text produced by :meth:`to_json`.

        Raises:
            ReportFormatError: the text is not valid JSON or not a valid Report.
        """
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ReportFormatError(f"the Report is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def save_json(self, path: str | Any) -> str:
        """Write :meth:`to_json` to ``path``; return the path written."""
        import pathlib

        target = pathlib.Path(path)
        target.write_text(self.to_json(), encoding="utf-8")
        return str(target)

    @classmethod
    def load_json(cls, path: str | Any) -> Report:
        """Read a Report saved by :meth:`save_json`."""
        import pathlib

        return cls.from_json(pathlib.Path(path).read_bytes())

    def save_html(self, path: str | Any, *, title: str | None = None) -> str:
        """Write a self-contained HTML page with the viewer (see :mod:`nstviz.render.html`); return its path."""
        from nstviz.render.html import save_html

        return str(save_html(self, path, title=title))


# -- generic dataclass <-> JSON codec -----------------------------------------------------


# Fields always written for these bulky classes; their other fields are written only when
# they differ from the default, which keeps a node at ~60-120 bytes of JSON.
_ALWAYS_WRITTEN: dict[str, frozenset[str]] = {
    "Node": frozenset({"name", "op", "target", "inputs", "region"}),
    "TensorInfo": frozenset({"shape", "dtype", "device"}),
}
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


# The codec is compiled once per class into closures: a 50,000-node Report then encodes and
# decodes in about a second instead of several (no per-value type introspection).

_Encoder = Callable[[Any], Any]
_ENCODER_PLANS: dict[type, tuple[tuple[str, Any, bool], ...]] = {}


def _encoder_plan(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    plan = _ENCODER_PLANS.get(cls)
    if plan is None:
        always = _ALWAYS_WRITTEN.get(cls.__name__)
        plan = tuple(
            (f.name, _field_default(f), always is None or f.name in always)
            for f in dataclasses.fields(cls)
        )
        _ENCODER_PLANS[cls] = plan
    return plan


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            # JSON has no NaN/Infinity; JSON.parse in the viewer would reject them.
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        return value
    if kind is tuple or kind is list:
        return [_encode(v) for v in value]
    if kind is dict:
        return {str(k): _encode(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for name, default, always in _encoder_plan(kind):
            item = getattr(value, name)
            if not always and item == default:
                continue
            out[name] = _encode(item)
        return out
    if isinstance(value, float):  # float subclasses (numpy scalars converted upstream)
        return _encode(float(value))
    return value


# A decode path is a linked tuple (parent, key), rendered only when an error is raised.
_Path = Any
_Decoder = Callable[[Any, _Path], Any]
_DECODERS: dict[Any, _Decoder] = {}


def _render_path(path: _Path) -> str:
    keys = []
    while isinstance(path, tuple):
        path, key = path
        keys.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return str(path) + "".join(reversed(keys))


def _fail(path: _Path, message: str) -> ReportFormatError:
    return ReportFormatError(f"{_render_path(path)}: {message}")


def _decoder(tp: Any) -> _Decoder:
    decoder = _DECODERS.get(tp)
    if decoder is None:
        decoder = _build_decoder(tp)
        _DECODERS[tp] = decoder
    return decoder


def _build_decoder(tp: Any) -> _Decoder:
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if origin is Literal:
        allowed = get_args(tp)

        def decode_literal(data: Any, path: _Path) -> Any:
            if data not in allowed:
                raise _fail(path, f"{data!r:.60} is not one of {allowed}")
            return data

        return decode_literal
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        nullable = len(args) < len(get_args(tp))
        if len(args) == 1:
            inner = _decoder(args[0])

            def decode_optional(data: Any, path: _Path) -> Any:
                return None if data is None else inner(data, path)

            return decode_optional
        inners = [_decoder(a) for a in args]

        def decode_union(data: Any, path: _Path) -> Any:
            if data is None and nullable:
                return None
            for inner in inners:
                try:
                    return inner(data, path)
                except ReportFormatError:
                    continue
            raise _fail(path, f"{data!r:.60} matches no allowed type")

        return decode_union
    if origin is tuple:
        item_tp = get_args(tp)[0]
        item = _decoder(item_tp)

        def decode_tuple(data: Any, path: _Path) -> Any:
            if type(data) is not list:
                raise _fail(path, f"expected a list, got {data!r:.60}")
            if item_tp is str and all(type(v) is str for v in data):
                return tuple(data)
            return tuple([item(v, (path, i)) for i, v in enumerate(data)])

        return decode_tuple
    if origin is dict:
        value = _decoder(get_args(tp)[1])

        def decode_dict(data: Any, path: _Path) -> Any:
            if type(data) is not dict:
                raise _fail(path, f"expected an object, got {data!r:.60}")
            return {str(k): value(v, (path, k)) for k, v in data.items()}

        return decode_dict
    if tp is Any:
        return lambda data, path: data
    if tp is float:

        def decode_float(data: Any, path: _Path) -> Any:
            kind = type(data)
            if kind is float:
                return data
            if kind is int:
                return float(data)
            if kind is str and data in _NON_FINITE:
                return _NON_FINITE[data]
            raise _fail(path, f"expected float, got {data!r:.60}")

        return decode_float
    if tp in (int, str, bool):

        def decode_exact(data: Any, path: _Path) -> Any:
            if type(data) is tp:
                return data
            raise _fail(path, f"expected {tp.__name__}, got {data!r:.60}")

        return decode_exact
    raise TypeError(f"unsupported type in Report model: {tp!r}")  # pragma: no cover


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """Resolved type hints of a model class (cached)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _dataclass_decoder(cls: type) -> _Decoder:
    hints = _hints(cls)
    plan = tuple(
        (
            f.name,
            _decoder(hints[f.name]),
            bool(f.metadata.get("required"))
            or (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING),
        )
        for f in dataclasses.fields(cls)
    )
    name = cls.__name__
    missing = object()

    def decode_dataclass(data: Any, path: _Path) -> Any:
        if type(data) is not dict:
            raise _fail(path, f"expected an object for {name}, got {data!r:.60}")
        kwargs = {}
        for field_name, decode, required in plan:
            item = data.get(field_name, missing)
            if item is not missing:
                kwargs[field_name] = decode(item, (path, field_name))
            elif required:
                raise _fail(path, f"missing required field '{field_name}' of {name}")
        return cls(**kwargs)

    return decode_dataclass


def _decode(tp: Any, data: Any, path: str) -> Any:
    return _decoder(tp)(data, path)


MODEL_CLASSES: tuple[type, ...] = (
    Location,
    TensorInfo,
    Node,
    Graph,
    Compile,
    BreakSplit,
    Break,
    NonInputRead,
    Region,
    MarkedFunction,
    Run,
    BreakDiff,
    RunCounts,
    Chip,
    Headline,
    RankView,
    Finding,
    OutputDetail,
    OutputComparison,
    OutputCheck,
    Candidate,
    Recommendation,
    SourceFile,
    Report,
)

__all__ = [cls.__name__ for cls in MODEL_CLASSES] + [
    "SCHEMA_VERSION",
    "BreakStatus",
    "ChipKind",
    "Level",
    "NodeOp",
    "Tone",
    "break_id",
]

