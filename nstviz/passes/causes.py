"""The real cause of a failed attempt, in words a user can act on.

torch wraps what went wrong: a nonstrict call rejected at fake-tensor time surfaces as
``TorchRuntimeError: RuntimeError when making fake tensor call`` (or GB0251 "Unsupported
output type"), with the real message (numpy inputs, ``NoneType``, a data-dependent operator,
mismatched sizes) further down the chain. The capture keeps that message as
``Break.root_cause``; these helpers put it first, and add the data-dependent hint only when
the cause is data-dependent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from nstviz._gb_ids import DATA_DEPENDENT, NONSTRICT_INPUT_REJECTED, NONSTRICT_OUTPUT_REJECTED
from nstviz._text import first_line
from nstviz.report.model import Break
from nstviz.tracing.unwrap import unwrap_fake_tensor_error

__all__ = [
    "DATA_DEPENDENT_HINT",
    "explain_error",
    "explain_failure",
    "is_data_dependent",
    "output_rejection",
    "rejected_output_type",
    "unwrap_fake_tensor_error",  # read from traceback text, so it lives in tracing/
    "unwrap_message",
]

_WRAPPERS = (
    "RuntimeError when making fake tensor call",
    "Unsupported output type for nonstrict_trace",
    "Dynamo failed to run FX node with fake tensors",
)

DATA_DEPENDENT_HINT = (
    "nonstrict_trace cannot trace data-dependent operations (.item(), nonzero, data-dependent "
    "branches) either: keep the break, or try the break's own hint "
    "(torch._dynamo.config.capture_scalar_outputs / capture_dynamic_output_shape_ops = True)"
)

_DD = re.compile(r"DataDependent|DynamicOutputShape|data[- ]dependent|_local_scalar_dense|GuardOnDataDependent", re.I)


def is_data_dependent(text: str | None) -> bool:
    """Whether a cause names a data-dependent operation."""
    return bool(text and _DD.search(text))


def unwrap_message(text: str | None) -> str:
    """The first line of ``text`` that is not one of torch's wrapper messages."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    for ln in lines:
        if not any(w in ln for w in _WRAPPERS) and not ln.startswith(("Explanation:", "Hint:", "Developer debug")):
            got = re.search(r"got (\w+(?:Error|Exception)\(.*)", ln)
            return got.group(1) if got else ln
    return lines[0] if lines else ""


_OUTPUT_LEAF = re.compile(r"non-fx-graphable type <class '([\w.]+)'>")


def rejected_output_type(gb_id: str | None, cause: str | None) -> str | None:
    """The type torch refused as the *output* of a nonstrict_trace-ed function, if that is the cause.

    GB0251 ("Unsupported output type") wraps ``flat_apply``'s check of the function's result,
    whose message speaks of "(args, kwargs)" although it is the return value: Dynamo checks
    the inputs itself before (GB0236), so a non-graphable leaf under GB0251 is in the output.
    """
    if gb_id != NONSTRICT_OUTPUT_REJECTED:
        return None
    m = _OUTPUT_LEAF.search(cause or "")
    return m.group(1) if m else None


def output_rejection(typ: str) -> str:
    """What a refused output type means, in words that name the return value (not the inputs)."""
    what = "returns None" if typ == "NoneType" else f"returns a {typ} (in its result)"
    return (
        f"the function {what} (it returned {typ}), which a nonstrict_trace-ed function cannot "
        "return: only tensors, numbers and lists/tuples/dicts of them can be outputs"
    )


def explain_failure(failure: Break, candidate_gb_ids: Iterable[str | None] = ()) -> str:
    """Why a nonstrict attempt failed: the real cause first, then what to do.

    The data-dependent hint is given when the cause is data-dependent, or, when torch kept no
    cause (GB0251 without one), when the breaks the candidate was tried for are.
    """
    cause = failure.root_cause or ""
    if cause and (failure.reason or "") and failure.reason in cause:
        cause = ""  # the "cause" is the break itself (GB0236 raised directly)
    head = first_line(failure.reason, 160)
    if rejected_output_type(failure.gb_id, cause) == "NoneType":  # torch's text speaks of "(args, kwargs)"
        return f"{head}: {output_rejection('NoneType')}; return the tensor it computes, or leave it unmarked"
    text = f"{head}: {first_line(cause, 240)}" if cause else head
    unknown_dd = not cause and failure.gb_id == NONSTRICT_OUTPUT_REJECTED and bool(set(candidate_gb_ids) & DATA_DEPENDENT)
    if is_data_dependent(cause) or (not cause and is_data_dependent(failure.detail)) or unknown_dd:
        return f"{text}; {DATA_DEPENDENT_HINT}"
    if failure.gb_id == NONSTRICT_INPUT_REJECTED or "NoneType" in cause or "non-fx-graphable" in cause or "numpy" in cause:
        seen = re.search(r"input of type <?(?:class ')?([\w.]+)", f"{cause} {failure.detail} {failure.reason}")
        what = f" (it got {seen.group(1).strip()})" if seen else ""
        return (
            f"{text}{what}; only tensors, numbers and lists/tuples/dicts of them can be inputs: leave a "
            "None parameter at its default, pass the constant through an adapter that takes only the "
            "tensors, or register the type with torch.utils._pytree (register_dataclass / register_constant)"
        )
    return text


def explain_error(error: str, fatal: Break | None) -> str:
    """A hard compile error: ``compile failed: <real cause>``."""
    cause = (fatal.root_cause if fatal is not None and fatal.root_cause else None) or unwrap_message(error)
    lines = [ln.strip() for ln in cause.splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].endswith("raised:"):
        # "BackendCompilerFailed: backend='...' raised:" says where; the next line says what
        cause = f"{lines[0]} {lines[1]}"
    where = ""
    if fatal is not None and fatal.location.file:
        where = f" at {fatal.location.file.rsplit('/', 1)[-1]}:{fatal.location.line}"
    text = f"compile failed{where}: {first_line(cause, 240)}"
    if is_data_dependent(cause):
        text += f"; {DATA_DEPENDENT_HINT}"
    return text
