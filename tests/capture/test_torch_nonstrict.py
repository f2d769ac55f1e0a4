"""PyTorch's own ``test_nonstrict_trace_*`` tests, through nstviz (issue 17, item 3).

The cases are torch's tests rewritten as cells (``tests/capture/cases/torch_nonstrict.py``
says where they come from and how they were rewritten): the decorator removed, nstviz marks
the function, each cell run in both forms, the compiled call as written (uncaught) and
inside ``try: ... except Exception as e: print(e)`` (caught, as the seed document does).

Expectations, from torch's own assertions:

- **works** (torch asserts ``ref == res``): a fatal break in the baseline (the
  ``fullgraph=True`` compile fails on the ``graph_break()`` the decorator hid), 0 breaks in
  the nonstrict run, a region for the marked function, outputs equal to eager, and torch's
  ``assertEqual`` s hold in the namespace afterwards.
- **refuses** (torch asserts ``Unsupported`` with a message): the message is in the run (a
  fatal break), the headline is not green, and where registering a user class with
  ``torch.utils._pytree`` makes it compile (an unregistered class as input or output), the
  advisor (``auto=True``) finds that remedy, verified, and its code pastes.

Both forms have the same expectations: a ``fullgraph`` failure the user's code catches is the
same fatal Break as an uncaught one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import torch

import nstviz
from nstviz.capture import _torch_compat
from tests.capture.cases.torch_nonstrict import CASES, Case
from tests.helpers import fresh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def _params(outcome: str, *, remedy: bool = False) -> list[Any]:
    out = []
    for case in CASES:
        if case.outcome != outcome or (remedy and case.remedy is None):
            continue
        for form in ("uncaught", "caught"):
            out.append(pytest.param(case, form, id=f"{case.name.removeprefix('test_')}-{form}"))
    return out


@pytest.fixture
def pytree_nodes() -> Iterator[list[type]]:
    """Classes the cell registers (torch's ``self.register_pytree_node``), deregistered after the test."""
    from torch.utils import _pytree as pytree

    before = _torch_compat.pytree_registry_state()
    names = dict(pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE)
    added: list[type] = []
    yield added
    for cls in added:  # each run of the cell registered its own class under the same serialized name
        pytree.SUPPORTED_NODES.pop(cls, None)
        pytree.SUPPORTED_SERIALIZED_TYPES.pop(cls, None)
    pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE.clear()
    pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE.update(names)
    assert _torch_compat.pytree_registry_state() == before


def _namespace(added: list[type], **extra: Any) -> dict[str, Any]:
    """A notebook's namespace (``__name__`` is ``__main__``) with torch's test helper in it."""
    from torch.utils import _pytree as pytree

    def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None):
        pytree._private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name)
        added.append(cls)

    return {"__name__": "__main__", "register_pytree_node": register_pytree_node, **extra}


def _run(case: Case, form: str, added: list[type], **kw: Any) -> tuple[nstviz.Report, dict[str, Any]]:
    ns = _namespace(added)
    kw.setdefault("nonstrict", list(case.nonstrict))
    report = nstviz.trace_code(
        case.cell(form == "caught"), ns, baseline=case.baseline, filename=f"<{case.name}>", **kw
    )
    report.validate()
    return report, ns


def _torch_equal(case: Case, ns: dict[str, Any]) -> None:
    """torch's ``self.assertEqual(a, b)`` of the test, on the namespace after the run."""
    for left, right in case.equal:
        torch.testing.assert_close(eval(left, ns), eval(right, ns), msg=f"{left} != {right}")


def _dynamo_graphs(run) -> int:
    return sum(g.level == "dynamo" for g in run.graphs)


@pytest.mark.parametrize(("case", "form"), _params("works"))
def test_works_fatal_break_then_one_region(case: Case, form: str, pytree_nodes: list[type]) -> None:
    report, ns = _run(case, form, pytree_nodes)
    base, nst = report.runs["baseline"], report.runs["nonstrict"]
    # the fullgraph compile fails on the graph break the decorator hid: one fatal break
    assert [(b.gb_id, b.fatal) for b in base.breaks] == [("GB0025", True)]
    assert base.breaks[0].reason == "Call to `torch._dynamo.graph_break()`"
    assert base.graphs == ()
    assert report.counts["baseline"].breaks == 1
    # marked: no break, the marked function is a region, one compile per torch frame count
    assert nst.breaks == () and nst.error is None
    marked = {n.rpartition(".")[2] for n in case.nonstrict} or {"trace_me"}
    assert {r.function.rpartition(".")[2] for r in nst.regions} == marked
    assert len(nst.regions) == case.compiles
    assert _dynamo_graphs(nst) == case.compiles
    assert [(m.qualname, m.applied) for m in nst.marked if m.origin == "requested"] == [
        (n, True) for n in case.nonstrict
    ]
    assert len(report.diff.resolved) == 1 and not report.diff.remaining and not report.diff.introduced
    # outputs against eager (the baseline's compile failed: its values are not outputs)
    assert report.outputs.match is True
    assert [(c.left, c.right, c.match) for c in report.outputs.comparisons] == [("eager", "nonstrict", True)]
    graphs = f"{case.compiles} graph{'s' if case.compiles > 1 else ''}"
    assert report.summary().splitlines()[0] == f"1 break → 0, fullgraph failed → {graphs}, outputs match eager"
    _torch_equal(case, ns)


@pytest.mark.parametrize(("case", "form"), _params("breaks"))
def test_no_action_at_a_distance(case: Case, form: str, pytree_nodes: list[type]) -> None:
    # torch: calling nonstrict_trace(trace_me) and dropping the result marks nothing; 1 graph break, 2 frames
    report, ns = _run(case, form, pytree_nodes)
    assert list(report.runs) == ["baseline"]
    base = report.runs["baseline"]
    assert [(b.gb_id, b.fatal, b.location.function) for b in base.breaks] == [("GB0025", False, "trace_me")]
    assert _dynamo_graphs(base) == case.compiles == 2
    assert base.marked == () and base.regions == () and base.error is None
    assert report.headline.chips[0].text == "nothing was marked (baseline only)"
    _torch_equal(case, ns)


def _refusing_run(report: nstviz.Report, case: Case):
    """The run where torch refuses: the nonstrict run, or the baseline when the code marks in source."""
    return report.runs["nonstrict" if case.nonstrict else "baseline"]


def _not_green(report: nstviz.Report) -> None:
    chips = report.headline.chips
    assert not [c.text for c in chips if c.kind in ("breaks", "graphs") and c.tone == "good"]
    assert any(c.tone == "bad" for c in chips) or all(c.tone == "neutral" for c in chips)
    assert "outputs match" not in report.summary().splitlines()[0]


@pytest.mark.parametrize(("case", "form"), _params("refuses"))
def test_refuses_with_torchs_message(case: Case, form: str, pytree_nodes: list[type]) -> None:
    report, _ = _run(case, form, pytree_nodes)
    run = _refusing_run(report, case)
    fatal = [b for b in run.breaks if b.fatal]
    assert len(fatal) == 1, run.breaks
    text = " ".join((fatal[0].reason, fatal[0].detail, fatal[0].explanation or ""))
    assert case.refusal in text
    assert run.graphs == () and report.counts[run.name].graphs == 0
    _not_green(report)
    if form == "uncaught":  # torch's `except torch._dynamo.exc.Unsupported`
        assert isinstance(report.user_exception, torch._dynamo.exc.Unsupported)
    else:
        assert case.refusal in run.stdout  # the cell printed torch's message


PASTE = r"""
import json, sys, torch
cell, call = json.loads(sys.stdin.read())
ns = {"__name__": "__main__", "register_pytree_node": torch.utils._pytree.register_pytree_node}
exec(compile(cell, "<pasted>", "exec"), ns)
with torch.compiler.set_stance("force_eager"):
    exec(compile(call.replace("res =", "eager_res =", 1), "<eager>", "exec"), ns)
torch.testing.assert_close(ns["res"], ns["eager_res"])
print(json.dumps({"ok": True}))
"""


def _pasted(case: Case, code: str) -> dict[str, Any]:
    """The cell with the recommendation pasted before the compiled call, in a fresh Python (no nstviz)."""
    cell = case.cell(False).replace(case.call, code + "\n" + case.call)
    out = fresh.run(["-c", PASTE], input=json.dumps([cell, case.call]), cwd=ROOT,
                    env={**os.environ, "PYTHONPATH": ROOT}, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _check_remedy(report: nstviz.Report, case: Case, module: str, *, paste: bool = True) -> None:
    name = f"{module}.{case.remedy}"
    by = {c.function: c for c in report.candidates}
    assert f"pytree: {name}" in by, report.candidates
    assert by[f"pytree: {name}"].status == "improved", report.candidates
    assert (by[f"pytree: {name}"].breaks_after, by[f"pytree: {name}"].outputs_match) == (0, True)
    rec = report.recommendation
    assert rec is not None
    assert (rec.pytree, rec.breaks_after, rec.outputs_match) == ((name,), 0, True)
    assert f"torch.utils._pytree.register_pytree_node({case.remedy}, " in rec.code
    # the nonstrict run applies the recommendation: it compiles, outputs equal eager
    nst = report.runs["nonstrict"]
    assert nst.breaks == () and nst.error is None and _dynamo_graphs(nst) == 1
    assert report.outputs.match is True
    assert report.summary().splitlines()[0] == "1 break → 0, fullgraph failed → 1 graph, outputs match eager"
    if paste:
        assert _pasted(case, rec.code) == {"ok": True}


@pytest.mark.parametrize(("case", "form"), _params("refuses", remedy=True))
def test_refusal_gets_the_pytree_remedy(case: Case, form: str, pytree_nodes: list[type]) -> None:
    before = _torch_compat.pytree_registry_state()
    report, ns = _run(case, form, pytree_nodes, nonstrict=[], auto=True)
    _check_remedy(report, case, "__main__")
    # nstviz's registrations (attempts, nonstrict run) are undone; the cell's own remain until the fixture ends
    assert not _torch_compat.is_pytree_node(ns[case.remedy])
    assert {c for c, _ in _torch_compat.pytree_registry_state()[0]} - {c for c, _ in before[0]} <= set(pytree_nodes)


def test_refusal_remedy_in_a_namespace_without_name(pytree_nodes: list[type]) -> None:
    # trace_code(src, {}): the cell's classes have __module__ "builtins"; still user classes
    case = next(c for c in CASES if c.name == "test_nonstrict_trace_custom_class_error")
    before = _torch_compat.pytree_registry_state()
    report = nstviz.trace_code(case.cell(False), {}, auto=True, filename=f"<{case.name}>")
    _check_remedy(report, case, "builtins", paste=False)  # the same code as with "__main__", pasted above
    assert _torch_compat.pytree_registry_state() == before
