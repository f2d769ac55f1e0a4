"""The advisor's source rewrites: proposals for the breaks left, and their verdict on other inputs.

For each break of the current run (most graph breaks first) whose innermost user function
resolves to a plain Python ``def`` (not torch's, not a lambda), :func:`nstviz.advisor.rewrites.propose`
gives the rewrites that fit the break; each becomes an attempt of ``kind="rewrite"``, run on
top of the kept marks like any other (the rewrite applied live with ``rewrite.applied()`` and
undone after) and judged by the same rule. A rewrite that improves is kept only when its
outputs also equal eager on other inputs of the same shapes (``Trials.other_inputs``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection
from typing import Any

from nstviz.advisor.attempt import MarkAttempt, RewriteAttempt, derive
from nstviz.advisor.propose import _short_break, plan_candidates, qualname_at
from nstviz.advisor.rewrites import BreakSite, Proposal, propose, recorded_calls
from nstviz.advisor.rewrites.build_once import propose_build_once
from nstviz.advisor.trials import Trials
from nstviz.capture.remedy import Mark
from nstviz.passes.candidates import is_runtime_wrapper
from nstviz.report import Candidate, Run
from nstviz.report.facts import rank_breaks
from nstviz.tracing.stacks import is_torch_file

__all__ = ["rewrite_candidates", "second_inputs"]


def rewrite_candidates(
    run: Run,
    resolve: Callable[[str], Callable | None],
    results: dict[str, Candidate],
    order: list[str],
    only: Collection[str] | None = None,
    run_eager: Callable[[], bool] | None = None,
    flags: tuple[str, ...] = (),
) -> list[RewriteAttempt]:
    """Rewrite attempts for the breaks of ``run`` not tried yet; adds their candidates to ``results``.

    A function a remedy looked at and turned down (e.g. a branch that prints) gets one
    ``rejected`` candidate with the reasons; one no remedy fits at all gets none. ``only``:
    just the rewrites of these remedies (``Rewrite.remedy``), and no rejected candidates.
    ``run_eager`` runs the code eagerly on its input sets: a break in a C or builtin call then
    gets a custom op too, its fake built from the calls recorded around it. ``flags``: the config
    flags ``run`` was made with (a flag tried and not kept), for the remedies that answer a break it moved.
    """
    out: list[RewriteAttempt] = []
    # the function each break is in (a function on the stack of a higher-ranked break too is still
    # the innermost one of its own: DETR's matcher calls the box check and holds the scipy call)
    for brk, p, caller, planned in _innermost(run):
        obj = p.obj or resolve(p.name) or _in_file(p.frame.file, p.name)
        relation = "contains"
        if obj is None and ".<locals>." in p.name:
            # a function defined inside another (a loss's `_mask_pads`) is made anew on every call:
            # the function that defines it is what is rewritten, the nested def with it
            outer = p.name.split(".<locals>.")[0]
            obj = resolve(outer) or _in_file(p.frame.file, outer)
            relation = f"defines {p.name.rsplit('.', 1)[-1]}, which contains"
        if obj is None:
            continue
        site = BreakSite(gb_id=brk.gb_id, line=p.frame.line, message=f"{brk.gb_type or ''} {brk.reason}", flags=flags)
        wants_calls = only is None or not _NEEDS_CALLS.isdisjoint(only)
        calls = _recorded(obj, run_eager) if run_eager is not None and wants_calls and _c_call(brk) else []
        targets = [(p, obj, relation, lambda obj=obj, site=site, calls=calls: propose(obj, site, calls))]
        if caller is not None and p.name.endswith(".__init__"):
            # a break while a module is built: the function that builds it is what can change
            c_obj = caller.obj or resolve(caller.name) or _in_file(caller.frame.file, caller.name)
            c_site = BreakSite(gb_id=brk.gb_id, line=caller.frame.line, message=site.message)
            if c_obj is not None:
                targets.append((caller, c_obj, "builds the module whose constructor holds",
                                lambda c_obj=c_obj, c_site=c_site: _fitting(propose_build_once(c_obj, c_site))))
        for p, obj, relation, proposing in targets:
            # the compiled function the plan left out gets a rewrite when one fits, not a rejected candidate
            out += _attempts_for(brk, p, obj, relation, proposing, results, order, only, quiet=not planned)
    return out


def _fitting(proposal: Proposal) -> Proposal:
    """``proposal`` without its notes when the remedy is made for other code (nothing to report)."""
    if not proposal.fits:
        proposal.notes = []
    return proposal


def _attempts_for(
    brk: Any, p: Any, obj: Callable, relation: str, proposing: Callable[[], Any], results: dict[str, Candidate],
    order: list[str], only: Collection[str] | None, *, quiet: bool = False,
) -> list[RewriteAttempt]:
    """The attempts of one function's proposal (``proposing()``); a rejected candidate with the notes when none fits.

    ``quiet``: no rejected candidate (a function no mark was proposed for either).

    ``relation``: how the function stands to the break, as the candidate's reason says it ("contains").
    """
    out: list[RewriteAttempt] = []
    try:
        proposal = proposing()
    except Exception as e:  # a remedy that cannot read the function is a note, not a crash
        proposal = None
        notes = [f"{type(e).__name__}: {e}"]
    else:
        notes = proposal.notes
    where = _short_break(brk)
    base_key = f"rewrite: {p.name}"
    rewrites = [r for r in (proposal.rewrites if proposal else []) if only is None or r.remedy in only or r.stands_for in only]
    if not rewrites:
        if notes and only is None and not quiet and base_key not in results:  # a reason why not (no remedy fits: nothing to say)
            order.append(base_key)
            results[base_key] = Candidate(
                function=base_key, why=f"{p.name} {relation} the break at {where}", status="rejected",
                kind="rewrite", file=p.frame.file, line=p.frame.line,
                precheck=tuple(notes),
            )
        return out
    # a variant that also sets a config flag (buffer ints with allow_rnn) first: it does more
    for r in sorted(rewrites, key=lambda r: not r.config):
        flags = "".join(f", {f}={v}" for f, v in sorted(r.config.items()))
        key = f"{base_key} ({r.remedy}{flags})"
        if key in results:
            continue
        why = f"{p.name} {relation} the break at {where}: rewritten, {r.remedy} ({r.description})"
        q = derive(
            RewriteAttempt, p, key=key, remedy=r, obj=obj, problems=[], reasons=[why], breaks=list(p.breaks),
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=[],
        )
        order.append(key)
        results[key] = Candidate(
            function=key, why=why, status="skipped", kind="rewrite", file=p.frame.file,
            line=p.frame.line, code=r.source,
        )
        out.append(q)
    return out




_NEEDS_CALLS = frozenset({"custom-op", "call-op", "numpy-op"})
"""Remedies built from the calls recorded in eager runs."""


def _innermost(run: Run) -> list[tuple[Any, Any, Any, bool]]:
    """``(break, candidate, its caller's candidate or None, planned)`` for each break of ``run`` (ranked) in a function.

    ``planned`` is False for the compiled function behind its wrappers, which the plan leaves out (:func:`_entry_frame`).
    """
    out = []
    for b in rank_breaks(run.breaks):
        planned = plan_candidates(run, [b])
        p = next((p for p in planned if p.depth == 0 and p.breaks), None)
        q = p or _entry_frame(b)
        if q is not None:
            out.append((b, q, next((c for c in planned if c.depth == 1), None) or _caller_on_stack(b, q), p is not None))
    return out


def _entry_frame(b: Any) -> MarkAttempt | None:
    """The user function the break is in, when the plan proposes none.

    That is the compiled function itself, behind its decorators' wrappers (``EncoderDecoderModel.forward``
    under ``can_return_tuple``): no mark can take it, a rewrite can.
    """
    for f in reversed(list(b.stack)):
        if is_torch_file(f.file) or f.function.startswith("<") or f.file.startswith("<") or is_runtime_wrapper(f):
            continue
        q = MarkAttempt(name=qualname_at(f), frame=f, depth=0)
        q.breaks, q.break_gb_ids = [b.id], [b.gb_id]
        return q
    return None


def _caller_on_stack(b: Any, p: Any) -> MarkAttempt | None:
    """The user function that called ``p``'s frame on ``b``'s stack, as a candidate of the same break.

    The plan leaves it out when it is the frame Dynamo compiled (the entry's own callee, e.g. a loss
    a wrapped model forward calls): a rewrite of it is still a rewrite of the code that runs.
    """
    stack = list(b.stack)
    at = next((i for i, f in enumerate(stack) if (f.file, f.line) == (p.frame.file, p.frame.line)), None)
    for f in reversed(stack[:at] if at else []):
        if is_torch_file(f.file) or f.function.startswith("<") or f.file.startswith("<") or is_runtime_wrapper(f):
            continue
        q = MarkAttempt(name=qualname_at(f), frame=f, depth=1, order=p.order)
        q.breaks, q.break_gb_ids = list(p.breaks), list(p.break_gb_ids)
        return q
    return None


_C_CALL_GB = frozenset({"GB4347", "GB9493", "GB0059", "GB0007", "GB0026", "GB0294", "GB0124", "GB0033", "GB0109"})
"""Breaks in a call Dynamo cannot follow (C code, builtins, numpy, ``.item()``/``.tolist()``)."""


def _c_call(brk: Any) -> bool:
    return brk.gb_id in _C_CALL_GB


def _recorded(obj: Callable, run_eager: Callable[[], bool]) -> list[tuple[Any, ...]]:
    """``obj``'s positional arguments in eager runs of the code on its input sets (none when they fail)."""
    try:
        with recorded_calls(obj) as calls:
            ran = run_eager()
    except Exception:  # a function that cannot be wrapped to record: no custom op
        return []
    return list(calls) if ran else []


def second_inputs(trials: Trials, marks: tuple[Mark, ...], flags: dict[str, bool] | None = None) -> tuple[bool | None, str]:
    """The rewrite's outputs on other inputs (``trials.other_inputs``, with ``flags`` set), or why they are not known."""
    check = trials.other_inputs
    if check is None:
        return None, "no second input set to verify the rewrite on"
    return check(marks, flags) if flags else check(marks)


def _in_file(path: str, qualname: str) -> Callable | None:
    """The function ``qualname`` of the imported module whose file is ``path`` (library code; a property's getter), or None."""
    norm = os.path.abspath(path)
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if f and os.path.abspath(f) == norm:
            obj: Any = mod
            for part in qualname.split("."):
                obj = getattr(obj, part, None)
            obj = obj.fget if isinstance(obj, property) else obj  # a property's code is its getter's
            return obj if callable(obj) else None
    return None
