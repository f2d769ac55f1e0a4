"""Dynamo's ``__compiled_fn_*``/``__resume_at_*`` globals of the runs before the last are dropped."""

import torch
from torch._dynamo.utils import CleanupManager

import nstviz
from nstviz.capture._torch_compat import DYNAMO_GLOBAL_PREFIXES

CELL = """
import torch
def helper(x):
    torch._dynamo.graph_break()
    return x * 2
@torch.compile(backend="eager")
def f(x):
    return helper(x.sin()) + 1
y = f(torch.ones(3))
"""


def _dynamo_names(ns: dict) -> set[str]:
    return {k for k in ns if k.startswith(DYNAMO_GLOBAL_PREFIXES)}


def _hooked(ns: dict) -> set[str]:
    return {h.name for hooks in CleanupManager.instance.values.values() for h in hooks if h.scope is ns}


def test_only_the_last_runs_dynamo_globals_stay():
    ns: dict = {}
    nstviz.trace_code(CELL, ns, filename="<globals-cell>")
    names = _dynamo_names(ns)
    # one run's worth: the nonstrict run's compiled frame, its two resume functions
    assert sum(n.startswith("__compiled_fn_") for n in names) == 1
    assert sum(n.startswith("__resume_at_") for n in names) == 2
    # every hook Dynamo still holds for this namespace names a global that exists (no KeyError
    # when its code dies), and every hooked global of the last run is still there
    assert _hooked(ns) <= set(ns)
    # the compiled function the user keeps still works
    assert torch.allclose(ns["f"](torch.ones(3)), torch.ones(3).sin() * 2 + 1)


def test_rerunning_does_not_accumulate():
    ns: dict = {}
    for _ in range(3):
        nstviz.trace_code(CELL, ns, filename="<globals-cell-2>")
    # each call keeps its last run's globals (as a plain re-run does), not 2-3 runs' worth
    assert sum(n.startswith("__compiled_fn_") for n in _dynamo_names(ns)) == 3
    assert _hooked(ns) <= set(ns)
