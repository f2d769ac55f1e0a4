"""The marks pass: which marked functions took effect in a run, and why not.

A function marked non-strict *applied* when at least one call went through the non-strict
path (an opaque ``flat_apply_capture`` node names it). When none did, the warning says why:
the break Dynamo reported for it (GB0236/GB0251, with the root cause), or that it was never
called inside compiled code (or is an ``nn.Module.forward`` called as ``module(...)``).
Functions marked in the code itself (``@nonstrict_trace``, public or private name) are listed as
``in_source``; so are functions the code decorated with ``torch._dynamo.decorators.leaf_function``
(their :attr:`MarkedFunction.decorator` says so).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from nstviz._gb_ids import NONSTRICT_REJECTED
from nstviz.passes.causes import output_rejection, rejected_output_type
from nstviz.passes.provenance import CallSite
from nstviz.report.model import Break, MarkedFunction, Run


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CapturedMark:
    """A function the run was asked to mark, as plain values.

    ``record`` has everything but ``applied`` and the final ``warning``; ``key`` is the
    function's code identity (:func:`nstviz.capture._introspect.code_key`, as text), ``name`` its
    ``__name__``.
    """

    record: MarkedFunction
    key: str
    name: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CapturedCall:
    """One non-strict call of a run (an opaque Dynamo node) and the function behind it."""

    site: CallSite
    key: str | None = None
    """Code identity of the function (None when it could not be told)."""
    decorator: Literal["nonstrict_trace", "leaf_function"] = "nonstrict_trace"
    """What made the call opaque: ``nonstrict_trace`` (a ``flat_apply`` node) or ``leaf_function``
    (an ``invoke_leaf_function`` node, written in the code)."""


def failed_nonstrict(run: Run, name: str | None) -> Break | None:
    """The break in which Dynamo refused to trace function ``name`` non-strictly, if any."""
    if not name:
        return None
    for brk in run.breaks:
        if brk.gb_id in NONSTRICT_REJECTED and f"Function: {name}" in brk.detail:
            return brk
    for brk in run.breaks:
        if brk.gb_id in NONSTRICT_REJECTED and brk.location.code and name in brk.location.code:
            return brk
    return None


def apply_marks(run: Run, marks: Sequence[CapturedMark], calls: Sequence[CapturedCall]) -> Run:
    """The run with :attr:`Run.marked` filled in: the marks asked for, then those in the code."""
    applied_keys = {c.key for c in calls if c.key is not None and c.decorator == "nonstrict_trace"}
    marked: list[MarkedFunction] = []
    seen: set[str] = set()
    for mark in marks:
        seen.add(mark.key)
        applied = mark.key in applied_keys
        warning = mark.record.warning
        qualname = mark.record.qualname
        failed = failed_nonstrict(run, mark.name) if not applied else None
        if failed is not None:
            cause = f"; root cause: {failed.root_cause}" if failed.root_cause else ""
            if rejected_output_type(failed.gb_id, failed.root_cause) == "NoneType":
                cause = f"; {output_rejection('NoneType')}"
            warning = (
                f"{qualname} was marked, but nonstrict_trace could not trace it: "
                f"{failed.reason} ({failed.gb_id}) at {failed.location.file}:{failed.location.line}{cause}"
            )
        if not applied and warning is None:
            warning = (
                f"{qualname} was marked but no call went through nonstrict_trace: it was not "
                "called inside compiled code, or it is an nn.Module forward called as module(...)"
            )
        marked.append(dataclasses.replace(mark.record, applied=applied, warning=warning))
    for call in calls:  # marks written in the code itself
        if call.key is None or call.key in seen:
            continue
        seen.add(call.key)
        site = call.site
        marked.append(
            MarkedFunction(
                spec="<source>",
                qualname=site.qualname,
                file=site.file,
                line_start=site.line_start,
                line_end=site.line_end,
                origin="in_source",
                reads=site.reads,
                decorator=call.decorator,
            )
        )
    return dataclasses.replace(run, marked=tuple(marked))


__all__ = ["CapturedCall", "CapturedMark", "apply_marks", "failed_nonstrict"]
