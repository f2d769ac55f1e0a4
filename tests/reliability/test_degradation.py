"""The degradation rule: every private-torch hook of ``_torch_compat`` feature-detects.

Each hook's API is broken on purpose, as nstviz sees it (removed, renamed, a new signature:
:func:`tests.helpers.broken_torch.broken_for_nstviz`), and a real capture runs. A degradable
hook must leave a Report whose notes name the lost feature and why, with the other features
there; an essential hook must stop with :class:`UnsupportedTorchError` before anything runs.
Either way the process state is as before. ``test_every_hook_has_a_case`` fails when a hook is
added to ``_torch_compat.HOOKS`` without a case here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from torch.torch_version import TorchVersion

import nstviz
from nstviz.capture import _torch_compat
from nstviz.errors import UnsupportedTorchError
from nstviz.report import Report
from tests.capture import remedy_toys
from tests.helpers.broken_torch import MISSING, broken_for_nstviz
from tests.helpers.snapshot import ProcessState, assert_restored

CELL = """
def helper(x):
    torch._dynamo.graph_break()
    return x * 2

@torch.compile(backend="aot_eager")
def fn(x):
    return helper(x.sin()) + 1

y = fn(torch.ones(4))
"""
"""One break in ``helper``; ``aot_eager`` so that a lost backend hook does not run inductor."""

FATAL_CELL = CELL.replace('backend="aot_eager"', 'backend="aot_eager", fullgraph=True')


def _run_cell(cell: str = CELL) -> Report:
    return nstviz.trace_code(cell, {"torch": torch}, nonstrict=["helper"])


def _run_pytree_remedy() -> Report:
    return nstviz.compare(remedy_toys.box_model, torch.ones(3), auto=True, max_attempts=2)


def _run_compiled_marked() -> Report:
    return nstviz.trace_code(CELL, {"torch": torch}, nonstrict=["fn"])


def _baseline_break(report: Report) -> None:
    """The mark on the compiled function did not take effect; the baseline is whole."""
    assert len(report.runs["baseline"].breaks) == 1
    assert "dynamo" in _levels(report, "baseline")


def _run_inductor() -> Report:
    return nstviz.trace_code(CELL, {"torch": torch}, nonstrict=["helper"], backend="inductor")


def _levels(report: Report, run: str) -> set[str]:
    return {g.level for g in report.runs[run].graphs}


def _breaks_and_graphs(report: Report) -> None:
    """What every degraded run of CELL still has: the break, its removal, graphs and the region."""
    assert len(report.runs["baseline"].breaks) == 1
    assert report.runs["nonstrict"].breaks == ()
    assert "dynamo" in _levels(report, "baseline") and "aten_inference" in _levels(report, "baseline")
    assert [r.function for r in report.runs["nonstrict"].regions] == ["helper"]


def _no_graphs(report: Report) -> None:
    assert len(report.runs["baseline"].breaks) == 1
    assert report.runs["nonstrict"].breaks == ()
    assert report.runs["baseline"].graphs == () and report.runs["nonstrict"].graphs == ()
    assert report.runs["baseline"].compiles  # from the trace log


def _dynamo_graphs_only(report: Report) -> None:
    assert len(report.runs["baseline"].breaks) == 1
    assert _levels(report, "baseline") == {"dynamo"} == _levels(report, "nonstrict")


def _unknown_compile_ids(report: Report) -> None:
    assert len(report.runs["baseline"].breaks) == 1
    graphs = report.runs["baseline"].graphs
    assert graphs and {(g.frame_id, g.compile_id) for g in graphs} == {(-1, -1)}


def _uncounted(report: Report) -> None:
    _breaks_and_graphs(report)
    assert report.runs["baseline"].dynamo_graph_breaks is None
    brk = report.runs["baseline"].breaks[0]
    assert brk.caused is not None and brk.caused >= 1  # read from the message


def _unexplained(report: Report) -> None:
    _breaks_and_graphs(report)
    brk = report.runs["baseline"].breaks[0]
    assert brk.gb_id is not None and brk.reason  # Dynamo's own message still has them


def _fatal_as_error(report: Report) -> None:
    assert "Unsupported" in (report.runs["baseline"].error or "")
    assert report.runs["nonstrict"].error is None and report.runs["nonstrict"].graphs


def _plain_names(report: Report) -> None:
    _breaks_and_graphs(report)
    targets = {n.target for g in report.runs["baseline"].graphs if g.level == "dynamo" for n in g.nodes}
    assert "sin" in targets  # torch.sin by its plain name (qualified: torch.sin)


def _advisor_ran(report: Report) -> None:
    assert report.runs["baseline"].breaks
    assert any(c.function.startswith("pytree:") for c in report.candidates)
    assert not _torch_compat.is_pytree_node(remedy_toys.Box)


def _inductor_unrecorded(report: Report) -> None:
    assert len(report.runs["baseline"].breaks) == 1
    assert _levels(report, "baseline") == {"dynamo"}


class _NoCallUserCompiler:
    """An ``OutputGraph`` whose backend call moved elsewhere (renamed)."""


class _NewSignatureOutputGraph:
    def call_user_compiler(self, gm: Any, example_inputs: Any, options: Any) -> Any:  # pragma: no cover
        raise AssertionError("never called")


class _ChangedCompileContext:
    @staticmethod
    def current_trace_id() -> object:
        return object()  # no .compile_id / .attempt


class _ChangedCleanupManager:
    """A ``CleanupManager`` without ``instance.values``."""


def _aot_new_signature(*, fw_compiler: Any, bw_compiler: Any) -> Any:  # pragma: no cover
    raise AssertionError("never called")


def _compile_fx_new_signature(model: Any, example_inputs: Any) -> Any:  # pragma: no cover
    raise AssertionError("never called")


@dataclass(frozen=True)
class Case:
    id: str
    hook: str
    module: str
    attr: str
    replacement: Any
    why: str
    """Regex of what the note says about the API (after its dotted path)."""
    run: Callable[[], Report] = _run_cell
    check: Callable[[Report], None] = _breaks_and_graphs


CASES = [
    Case("top-frame-removed", "top_frame", "torch._dynamo.external_utils", "wrap_inline", MISSING, "is missing",
         run=_run_compiled_marked, check=_baseline_break),
    Case("own-lines-removed", "own_lines", "torch._higher_order_ops.flat_apply", "impl", MISSING, "is missing"),
    Case("backend-renamed", "backend", "torch._dynamo.output_graph", "OutputGraph", _NoCallUserCompiler, "is missing",
         check=_no_graphs),
    Case("backend-new-signature", "backend", "torch._dynamo.output_graph", "OutputGraph", _NewSignatureOutputGraph,
         r"has a new signature \(self, gm, example_inputs, options\)", check=_no_graphs),
    Case("compile-ids-removed", "compile_ids", "torch._guards", "CompileContext", MISSING, "is missing",
         check=_unknown_compile_ids),
    Case("compile-ids-changed", "compile_ids", "torch._guards", "CompileContext", _ChangedCompileContext,
         r"has changed \(AttributeError: .*compile_id", check=_unknown_compile_ids),
    Case("aot-removed", "aot_record", "torch._dynamo.backends.common", "aot_autograd", MISSING, "is missing",
         check=_dynamo_graphs_only),
    Case("aot-new-signature", "aot_record", "torch._dynamo.backends.common", "aot_autograd", _aot_new_signature,
         r"has a new signature \(.*inference_compiler", check=_dynamo_graphs_only),
    Case("nop-removed", "aot_record", "torch._dynamo.backends.debugging", "boxed_nop", MISSING, "is missing",
         check=_dynamo_graphs_only),
    Case("inductor-new-signature", "inductor", "torch._inductor.compile_fx", "compile_fx", _compile_fx_new_signature,
         r"has a new signature \(model, example_inputs\) without inner_compile", run=_run_inductor,
         check=_inductor_unrecorded),
    Case("cleanup-removed", "dynamo_globals", "torch._dynamo.utils", "CleanupManager", MISSING, "is missing"),
    Case("cleanup-changed", "dynamo_globals", "torch._dynamo.utils", "CleanupManager", _ChangedCleanupManager,
         r"has changed \(no CleanupManager\.instance\.values dict\)"),
    Case("counter-removed", "break_counter", "torch._dynamo.utils", "counters", MISSING, "is missing",
         check=_uncounted),
    Case("counter-changed", "break_counter", "torch._dynamo.utils", "counters", {}, r"has changed \(KeyError: 'graph_break'\)",
         check=_uncounted),
    Case("registry-moved", "gb_registry", "torch._dynamo", "__file__", "/nonexistent/torch/_dynamo/__init__.py",
         "is missing", check=_unexplained),
    Case("unsupported-renamed", "fatal_break", "torch._dynamo.exc", "Unsupported", MISSING, "is missing",
         run=lambda: _run_cell(FATAL_CELL), check=_fatal_as_error),
    Case("fx-names-removed", "fx_names", "torch.fx.node", "_get_qualified_name", MISSING, "is missing",
         check=_plain_names),
    Case("pytree-removed", "pytree", "torch.utils._pytree", "_private_register_pytree_node", MISSING, "is missing",
         run=_run_pytree_remedy, check=_advisor_ran),
]

ESSENTIAL = [
    ("nonstrict_trace", "torch._dynamo", "nonstrict_trace", r"torch\._dynamo\.nonstrict_trace"),
    ("id_sets", "torch._dynamo.trace_rules", "_nonstrict_trace_callable_ids",
     r"torch\._dynamo\.trace_rules\._nonstrict_trace_callable_ids"),
    ("trace_logger", "torch._logging._internal", "trace_log", r"torch\._logging\._internal\.trace_log"),
]


def test_every_hook_has_a_case() -> None:
    degradable = {k for k, h in _torch_compat.HOOKS.items() if not h.essential}
    essential = {k for k, h in _torch_compat.HOOKS.items() if h.essential}
    assert {c.hook for c in CASES} == degradable
    assert {e[0] for e in ESSENTIAL} == essential


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_lost_feature_is_noted_and_the_rest_still_works(case: Case) -> None:
    if case.hook == "inductor":
        case.run()  # inductor's one-time setup (environment, recursion limit) is torch's, not nstviz's
    before = ProcessState.take()
    with broken_for_nstviz(case.module, case.attr, case.replacement):
        report = case.run()
    hook = _torch_compat.HOOKS[case.hook]
    want = re.escape(f"torch {torch.__version__}: {hook.api} ") + case.why
    lost = [n for n in report.notes if n.startswith(f"torch {torch.__version__}: {hook.api} ")]
    assert len(lost) == 1, report.notes
    assert re.match(want, lost[0]), lost[0]
    assert lost[0].endswith(f", so nstviz goes without {hook.feature}; {hook.without}")
    other = [n for n in report.notes if n.startswith(f"torch {torch.__version__}: ") and n not in lost]
    assert other == []  # only the broken hook is lost
    case.check(report)
    Report.from_json(report.to_json())  # a valid Report
    assert_restored(before)


def test_nothing_is_lost_on_a_tested_torch() -> None:
    report = _run_cell()
    assert not [n for n in report.notes if n.startswith(f"torch {torch.__version__}")], report.notes
    _breaks_and_graphs(report)


def test_a_newer_torch_is_named_in_the_report_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch 2.15.0 faked (``torch.__version__``, as ``_torch_compat.torch_version()`` reads it)."""
    monkeypatch.setattr(torch, "__version__", TorchVersion("2.15.0"))
    report = _run_cell()
    assert report.torch_version == "2.15.0"
    assert report.notes[0] == _torch_compat.untested_torch_note()
    assert report.notes[0].startswith("torch 2.15.0 is newer than the versions nstviz is tested with (2.13, 2.14)")
    assert sum("untested" in n for n in report.notes) == 1
    _breaks_and_graphs(report)


@pytest.mark.parametrize(("hook", "module", "attr", "api"), ESSENTIAL, ids=[e[0] for e in ESSENTIAL])
def test_an_essential_hook_stops_with_a_clear_message(
    hook: str, module: str, attr: str, api: str, before: ProcessState
) -> None:
    want = rf"torch \S+ lacks {api}.*, which nstviz needs; install torch 2\.13 or 2\.14"
    with broken_for_nstviz(module, attr), pytest.raises(UnsupportedTorchError, match=want) as caught:
        _run_cell()
    assert caught.value.__cause__ is None and (caught.value.__suppress_context__ or caught.value.__context__ is None)
    assert_restored(before)
