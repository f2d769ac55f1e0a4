"""The advisor's adapter (None arguments, GB0236) and pytree (user classes) remedies, on real compiles.

Toys in ``tests/capture/remedy_toys.py``: each breaks in a helper that nonstrict_trace could
trace, but is called with something it refuses. The advisor must try the remedy, verify it
(breaks, graphs, outputs), undo it exactly (class and module attributes, the pytree
registry), also when the attempt raises, and recommend code that gives the same counts
when pasted in a fresh process before the model is built.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

import nstviz
from nstviz.capture import _torch_compat, adapters
from tests.capture import remedy_toys as T
from tests.helpers import digest, fresh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PASTE = """
import json, sys, types, torch, nstviz
module = sys.modules["__recommendation__"] = types.ModuleType("__recommendation__")  # a user's module
exec(compile(sys.stdin.read(), "<recommendation>", "exec"), module.__dict__)
from tests.capture import remedy_toys as T
fn = T.make_gate_model() if sys.argv[1] == "gate" else getattr(T, sys.argv[1])
x = torch.arange(4.0) / 4
report = nstviz.compare(fn, x, check=False)
run = report.runs["baseline"]
out = torch.compile(fn, backend="eager")(x)
print(json.dumps({"breaks": len(run.breaks), "graphs": sum(g.level == "dynamo" for g in run.graphs),
                  "error": run.error, "out": out.tolist()}))
"""


def paste(name: str, code: str) -> dict:
    """Run ``code`` in a fresh process, then capture the toy ``name`` there."""
    out = fresh.run(["-c", PASTE, name], input=code, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def rows(report) -> list[tuple]:
    return [
        (c.function, c.kind, c.status, c.breaks_before, c.breaks_after, c.outputs_match)
        for c in report.candidates
    ]


X = torch.arange(4.0) / 4
NST = _torch_compat.nonstrict_trace_spelling()
"""How the pasted code spells nonstrict_trace on this torch (torch.compiler.nonstrict_trace on 2.14)."""
NEEDS_ADAPTER = not _torch_compat.nonstrict_accepts_none()
"""True on 2.13.0 and 2.14.1: nonstrict_trace refuses None inputs (GB0236)."""
TAKES_NONE = "this torch takes None leaves as nonstrict_trace inputs (pytorch PR #185742): no adapter is needed"


def test_explicit_none_is_taken_by_an_adapter_and_the_pasted_code_does_the_same():
    original = T.scale_and_break
    report = nstviz.compare(T.explicit_none, X, auto=True)
    assert T.scale_and_break is original  # module attribute restored
    if not NEEDS_ADAPTER:  # this torch takes None leaves: a plain mark, no adapter (probe checked in test_torch_features)
        assert rows(report) == [("scale_and_break", "nonstrict", "improved", 1, 0, True)]
        assert report.recommendation.adapters == () and "_adapter" not in report.recommendation.code
        return
    assert rows(report) == [
        ("scale_and_break", "nonstrict", "rejected", None, None, None),  # explicit None at the call site
        ("adapter: scale_and_break", "adapter", "improved", 1, 0, True),
    ]
    by = {c.function: c for c in report.candidates}
    assert "explicit None as its argument 2" in by["scale_and_break"].precheck[0]
    rec = report.recommendation
    assert (rec.functions, rec.adapters, rec.pytree, rec.breaks_before, rec.breaks_after, rec.outputs_match) == (
        (), ("scale_and_break",), (), 1, 0, True
    )
    assert rec.code == by["adapter: scale_and_break"].code
    assert rec.code.startswith(
        "import functools\n"
        "import torch\n"
        "from tests.capture import remedy_toys\n\n"
        "# scale_and_break is called with None arguments, which nonstrict_trace refuses (GB0236): an adapter\n"
        "# traces it non-strictly with the other arguments and puts the Nones back inside.\n"
        "_scale_and_break = remedy_toys.scale_and_break  # def at remedy_toys.py:15\n\n\n"
        f"@{NST}\n"
        "def _scale_and_break_nonstrict(args, kwargs, none_args, none_kwargs):\n"
    )
    assert rec.code.endswith("\n\nremedy_toys.scale_and_break = _scale_and_break_adapter\n")
    nst = report.runs["nonstrict"]
    assert (len(nst.breaks), digest.dynamo_graphs(nst)) == (0, 1)
    assert [(m.qualname, m.origin, m.applied) for m in nst.marked] == [
        ("scale_and_break.<nonstrict adapter>", "advisor", True)
    ]
    assert report.outputs.match is True
    got = paste("explicit_none", rec.code)
    assert (got["breaks"], got["graphs"], got["error"]) == (0, 1, None)
    assert got["out"] == pytest.approx(T.explicit_none(X).tolist())


@pytest.mark.skipif(not NEEDS_ADAPTER, reason=TAKES_NONE)
def test_none_in_a_variable_fails_the_mark_then_the_adapter_takes_it():
    original = T.shift_and_break
    report = nstviz.compare(T.none_in_variable, X, auto=True)
    assert T.shift_and_break is original
    assert rows(report) == [
        ("shift_and_break", "nonstrict", "failed", 1, 2, True),
        ("adapter: shift_and_break", "adapter", "improved", 1, 0, True),
    ]
    by = {c.function: c for c in report.candidates}
    assert "(it got NoneType)" in by["shift_and_break"].error
    assert by["adapter: shift_and_break"].why == "shift_and_break failed with None inputs (GB0236): retried through an adapter"
    rec = report.recommendation
    assert (rec.adapters, rec.breaks_after) == (("shift_and_break",), 0)
    got = paste("none_in_variable", rec.code)  # positional and keyword Nones
    assert (got["breaks"], got["graphs"], got["error"]) == (0, 1, None)
    assert got["out"] == pytest.approx(T.none_in_variable(X).tolist())


@pytest.mark.skipif(not NEEDS_ADAPTER, reason=TAKES_NONE)
def test_adapter_attempts_count_against_the_attempt_limit():
    report = nstviz.compare(T.none_in_variable, X, auto=True, max_attempts=1)
    assert rows(report) == [
        ("shift_and_break", "nonstrict", "failed", 1, 2, True),
        ("adapter: shift_and_break", "adapter", "skipped", None, None, None),
    ]
    assert report.candidates[1].error == "attempt limit (1) reached"
    assert report.recommendation is None


@pytest.mark.skipif(not NEEDS_ADAPTER, reason=TAKES_NONE)
def test_module_forward_adapter_replaces_the_class_attribute_and_restores_it():
    model = T.make_gate_model()
    original = T.Gate.__dict__["forward"]
    report = nstviz.compare(model, X, auto=True)
    assert T.Gate.__dict__["forward"] is original
    assert rows(report) == [
        ("Gate.forward", "nonstrict", "failed", 1, 2, True),  # the pre-hook made the mark effective: GB0236
        ("adapter: Gate.forward", "adapter", "improved", 1, 0, True),
    ]
    rec = report.recommendation
    assert rec.code.endswith("\n\nremedy_toys.Gate.forward = _Gate_forward_adapter\n")
    assert "register_module_forward_pre_hook" not in rec.code  # the adapter's inner call is a plain call
    got = paste("gate", rec.code)
    assert (got["breaks"], got["graphs"], got["error"]) == (0, 1, None)
    assert got["out"] == pytest.approx(model(X).tolist())


@pytest.mark.parametrize(
    ("toy", "cls", "how", "helper", "got"),
    [
        ("box_model", "Box", "register_dataclass", "use_box", "got"),
        ("pair_model", "Pair", "register_pytree_node", "use_pair", "got"),
        ("pair_out_model", "Pair", "register_pytree_node", "pair_of", "takes or returns"),  # as an output
    ],
)
def test_user_class_is_registered_with_pytree_for_the_attempt(toy, cls, how, helper, got):
    before = _torch_compat.pytree_registry_state()
    report = nstviz.compare(getattr(T, toy), X, auto=True)
    assert _torch_compat.pytree_registry_state() == before  # deregistered after the attempts
    assert not _torch_compat.is_pytree_node(getattr(T, cls))
    name = f"pytree: tests.capture.remedy_toys.{cls}"
    assert rows(report) == [
        (helper, "nonstrict", "failed", 1, 2, True),
        (name, "pytree", "improved", 1, 0, True),
    ]
    by = {c.function: c for c in report.candidates}
    cause = f"(it got {cls})" if got == "got" else f"non-fx-graphable type <class 'tests.capture.remedy_toys.{cls}'>"
    assert cause in by[helper].error
    assert by[name].why == (
        f"{helper} {got} {cls}, which is not a pytree: registered with torch.utils._pytree ({how}), "
        f"{helper} traced non-strictly"
    )
    rec = report.recommendation
    assert (rec.functions, rec.adapters, rec.pytree, rec.breaks_after, rec.outputs_match) == (
        (helper,), (), (f"tests.capture.remedy_toys.{cls}",), 0, True
    )
    assert f"torch.utils._pytree.{how}(remedy_toys.{cls}" in rec.code
    assert f"remedy_toys.{helper} = {NST}(remedy_toys.{helper})" in rec.code
    got = paste(toy, rec.code)
    assert (got["breaks"], got["graphs"], got["error"]) == (0, 1, None)
    assert got["out"] == pytest.approx(getattr(T, toy)(X).tolist())


class Boom(Exception):
    pass


@pytest.mark.parametrize("exc", [Boom, KeyboardInterrupt])
def test_adapters_and_registrations_are_undone_when_the_run_raises(exc):
    before = _torch_compat.pytree_registry_state()
    fn, forward = T.scale_and_break, T.Gate.__dict__["forward"]
    a = adapters.make_adapter(fn, "scale_and_break")
    g = adapters.make_adapter(forward, "Gate.forward")
    kinds = [adapters.pytree_type(T.Box), adapters.pytree_type(T.Pair)]
    assert [(type(p).__name__, n) for p, n in a.places] == [("dict", "scale_and_break")]
    assert g.places == [(T.Gate, "forward")]
    with pytest.raises(exc):
        with adapters.installed([a, g]), adapters.registered(kinds):
            assert T.scale_and_break is a.adapter and T.Gate.__dict__["forward"] is g.adapter
            assert _torch_compat.is_pytree_node(T.Box) and _torch_compat.is_pytree_node(T.Pair)
            raise exc()
    assert T.scale_and_break is fn and T.Gate.__dict__["forward"] is forward
    assert _torch_compat.pytree_registry_state() == before


def test_adapter_puts_nones_back_in_place():
    seen = []

    def f(a, b, c=None, *, d=None, e=5):
        seen.append((a, b, c, d, e))
        return a

    a = adapters.make_adapter(f, "f", [{"f": f}])
    a.adapter(1, None, 3, d=None, e=None)
    a.adapter(None, 2)
    assert seen == [(1, None, 3, None, None), (None, 2, None, None, 5)]


def test_summary_names_adapters_and_pytree_registrations():
    from nstviz.passes.assemble import build_report
    from nstviz.render.attempts import attempt_lines
    from nstviz.report import Candidate, Recommendation

    rec = Recommendation(functions=("use_box",), code="", breaks_before=3, breaks_after=0, outputs_match=True,
                         adapters=("Enc.forward",), pytree=("m.Box",))
    report = build_report(torch_version="x", runs={}, recommendation=rec, candidates=(
        Candidate(function="adapter: Enc.forward", why="w", status="improved", kind="adapter", run="attempt-2",
                  breaks_before=3, breaks_after=1),
    ))
    assert attempt_lines(report) == [
        "advisor: apply use_box, adapter for Enc.forward, pytree registration of m.Box (breaks 3 -> 0)",
        "  improved  adapter: Enc.forward 3 -> 1 breaks",
    ]
