"""What else can remove a break that nonstrict_trace did not: advice kept with the break.

A break at a call into C or builtin code (``zlib.crc32``, a builtin operator, a C iterator, a
numpy function, a function Dynamo skips) cannot be traced by Dynamo at all. nonstrict_trace
helps only when a Python function of the user's around the call can be marked; when the break
is still there after the marks (or nothing was marked), :func:`with_advice` writes the other
ways torch documents into :attr:`Break.advice`: make the call a custom op
(``torch.library.custom_op``: one opaque node in the graph) or give Dynamo a Python version
it can trace (``torch._dynamo.substitute_in_graph``: a polyfill). The viewer shows it with the
break; ``summary()`` and the CLI print it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from nstviz.report.model import Break, Run

__all__ = ["advice_for", "is_c_function_break", "with_advice"]

_C_FUNCTION_GB = frozenset({"GB0007", "GB0059", "GB4347", "GB0294"})
"""Registry ids of breaks at C/builtin or skipped code (torch 2.13 names: "Attempted to call
function marked as skipped", "Failed to trace builtin operator", "Missing tp_iternext",
"attempted to trace numpy function unsupported by PyTorch")."""
_C_FUNCTION_TEXT = ("builtin", "C function", "C/C++", "marked as skipped", "non-Python", "pybind")


def is_c_function_break(b: Break) -> bool:
    """Whether the break is at a call Dynamo cannot trace into (C/builtin or skipped code)."""
    if b.fatal and not b.gb_id:
        return False
    if b.gb_id in _C_FUNCTION_GB:
        return True
    text = f"{b.gb_type or ''} {b.reason or ''} {b.explanation or ''}"
    return any(k in text for k in _C_FUNCTION_TEXT)


def advice_for(b: Break) -> str | None:
    """The advice for one break that remains, or None when there is none to give."""
    if not is_c_function_break(b):
        return None
    code = (b.location.code or "").strip()
    what = f" (`{code[:60]}`)" if code else ""
    return (
        f"a call into C/builtin code{what}: Dynamo cannot trace it, and nonstrict_trace helps only by "
        "marking a Python function of yours around it; otherwise make the call a custom op "
        "(torch.library.custom_op: one opaque node in the graph) or give Dynamo a Python version it "
        "can trace (torch._dynamo.substitute_in_graph, a polyfill)"
    )


def with_advice(runs: Mapping[str, Run]) -> dict[str, Run]:
    """The runs with :attr:`Break.advice` set on the baseline's and nonstrict run's breaks that remain.

    "Remain" means: still in the nonstrict run (the code with the marks, or the advisor's
    recommendation), or in the baseline when there is no nonstrict run.
    """
    out = dict(runs)
    final = runs.get("nonstrict") or runs.get("baseline")
    if final is None:
        return out
    remaining = {b.id for b in final.breaks}
    for name in ("baseline", "nonstrict"):
        run = runs.get(name)
        if run is None:
            continue
        changed = False
        breaks = []
        for b in run.breaks:
            advice = advice_for(b) if b.id in remaining else None
            if advice != b.advice:
                b = dataclasses.replace(b, advice=advice)
                changed = True
            breaks.append(b)
        if changed:
            out[name] = dataclasses.replace(run, breaks=tuple(breaks))
    return out
