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
- **compile** (:class:`Compile`): one Dynamo compile of one frame, named as tlparse names it
  (``"frame/compile"``, ``"_attempt"`` after a restart: ``"1/0_1"``; :attr:`Compile.tlparse_id`,
  the text of its :class:`CompileId`):
  its function and file, graphs, time, failure, and why it happened (:class:`GuardFailure`: a
  guard of an earlier compile of the frame that failed; ``recompile``, ``limit_hit`` derived).
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

Layout: :mod:`nstviz.report.model` (the parts and the closed vocabularies; imports only
:mod:`~nstviz.report.location`, :mod:`~nstviz.report.compiles` and :mod:`~nstviz.report.timing`),
:mod:`nstviz.report.document` (:class:`Report`), :mod:`nstviz.report._codec` (JSON),
:mod:`nstviz.report.lint` (:meth:`Report.validate`), :mod:`nstviz.report.facts` (per-break counts,
rank order, the kind of a run's exception). Every public name is re-exported here.

Schema history: version 2 added :attr:`Break.id`, :attr:`Report.headline`, made
:attr:`Report.counts` required and :attr:`Node.op` a closed set. :meth:`Report.from_json`
reads version 1 and upgrades it (ids, counts and headline are computed on the way in). Fields added since, all optional
(older JSON still loads): :attr:`Run.error_kind`, :attr:`Run.timing`, :attr:`Headline.nothing_marked`,
:class:`Compile`'s ``guard_failures``, ``fail_type``, ``fail_location``, ``backend_compile_time_s``,
``guard_count``, ``cache_size``, ``stack``, ``qualname`` and :class:`Chip`'s ``help``, ``run``,
``compile_id`` (written only when set, so older files write back unchanged), and the derived
:attr:`Break.tally`, :attr:`Run.break_order`, ``Compile.recompile`` and ``Compile.limit_hit``
(computed, written for the viewer). Version 3 writes compile ids as :class:`CompileId` objects
(``Break.compile_ids``, ``BreakSplit.compile_id``, ``GuardFailure.compile_id``,
``Chip.compile_id``) where version 2 wrote tlparse's text; versions 1 and 2 are read and upgraded.
"""


from __future__ import annotations

from nstviz.report.document import Report
from nstviz.report.model import (
    SCHEMA_VERSION,
    Break,
    BreakDiff,
    BreakSplit,
    BreakStatus,
    BreakTally,
    Candidate,
    CandidateStatus,
    Chip,
    ChipKind,
    Compile,
    CompileId,
    ErrorKind,
    Finding,
    Graph,
    GuardFailure,
    Headline,
    Level,
    Location,
    MarkedFunction,
    Node,
    NodeOp,
    NonInputRead,
    OutputCheck,
    OutputComparison,
    OutputDetail,
    RankView,
    ReadKind,
    Recommendation,
    Region,
    Run,
    RunCounts,
    SourceFile,
    TensorInfo,
    Tone,
    break_id,
    break_rank_key,
)
from nstviz.report.timing import CallTiming, RunTiming, format_timing, rank_key

MODEL_CLASSES: tuple[type, ...] = (
    Location,
    TensorInfo,
    Node,
    Graph,
    CompileId,
    GuardFailure,
    Compile,
    BreakSplit,
    Break,
    BreakTally,
    NonInputRead,
    Region,
    MarkedFunction,
    CallTiming,
    RunTiming,
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
    "CandidateStatus",
    "ChipKind",
    "ErrorKind",
    "Level",
    "NodeOp",
    "ReadKind",
    "Tone",
    "break_id",
    "break_rank_key",
    "format_timing",
    "rank_key",
]

