"""Rewrites of a breaking function's own code, applied live without editing the user's files.

Each remedy takes a live function and the break Dynamo reported in it (:class:`BreakSite`) and
returns a :class:`Proposal`: :class:`Rewrite` s (paste-ready source, a context manager that
installs the rewritten function where the original is looked up and always restores it, the
config it needs) and notes. :func:`verify` keeps a rewrite only when compiled outputs equal
eager on two or more input sets and ``torch._dynamo.explain`` counts fewer graphs.

Typical use by the advisor, for one break in function ``fn`` reached from ``model``::

    with recorded_calls(fn) as calls:        # fn's own arguments, for the custom-op fake
        for args in input_variants(inputs):
            model(*args)
    proposal = propose(fn, BreakSite(gb_id, line, message), calls)
    best, verdicts = choose(fn, proposal.rewrites, input_variants(inputs), entry=model)
    if best is not None:
        print(best.source)                   # paste-ready; best.config holds any config flags
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, shape_only
from nstviz.advisor.rewrites._source import RewriteError
from nstviz.advisor.rewrites.bool_order import propose_static_first
from nstviz.advisor.rewrites.branches import propose_branch
from nstviz.advisor.rewrites.buffer_reads import propose_buffer_reads
from nstviz.advisor.rewrites.buffers import owner_class, propose_buffer_ints
from nstviz.advisor.rewrites.build_once import propose_build_once
from nstviz.advisor.rewrites.call_ops import propose_call_op
from nstviz.advisor.rewrites.checks import propose_check
from nstviz.advisor.rewrites.custom_ops import propose_custom_op, recorded_calls
from nstviz.advisor.rewrites.dense_experts import propose_dense_experts
from nstviz.advisor.rewrites.guarded_writes import propose_guarded_write
from nstviz.advisor.rewrites.indices import propose_index_ops
from nstviz.advisor.rewrites.known_values import propose_known_values
from nstviz.advisor.rewrites.logging_calls import propose_logger_noop
from nstviz.advisor.rewrites.loops import propose_loop
from nstviz.advisor.rewrites.masked_reductions import propose_masked_reduce
from nstviz.advisor.rewrites.numpy_ops import propose_numpy_op
from nstviz.advisor.rewrites.numpy_scalars import propose_numpy_scalars
from nstviz.advisor.rewrites.routers import propose_experts_implementation
from nstviz.advisor.rewrites.scalars import propose_scalar
from nstviz.advisor.rewrites.segments import propose_segment_mask
from nstviz.advisor.rewrites.selection_sizes import propose_mask_count
from nstviz.advisor.rewrites.size_checks import propose_size_check
from nstviz.advisor.rewrites.sizes import propose_size_branch
from nstviz.advisor.rewrites.state_branches import propose_state_where
from nstviz.advisor.rewrites.verify import Verdict, choose, graph_count, input_variants, verify

__all__ = [
    "BreakSite",
    "Proposal",
    "Rewrite",
    "RewriteError",
    "Verdict",
    "choose",
    "graph_count",
    "input_variants",
    "propose",
    "propose_branch",
    "propose_buffer_reads",
    "propose_build_once",
    "propose_call_op",
    "propose_check",
    "propose_custom_op",
    "propose_dense_experts",
    "propose_guarded_write",
    "propose_index_ops",
    "propose_known_values",
    "propose_logger_noop",
    "propose_loop",
    "propose_mask_count",
    "propose_masked_reduce",
    "propose_numpy_op",
    "propose_numpy_scalars",
    "propose_scalar",
    "propose_segment_mask",
    "propose_size_branch",
    "propose_size_check",
    "propose_state_where",
    "propose_static_first",
    "recorded_calls",
    "shape_only",
    "verify",
]


def propose(fn: object, brk: BreakSite, calls: Sequence[tuple[Any, ...]] = ()) -> Proposal:
    """Every remedy that fits the break, in order of value: checks, branches, scalars, loops, numpy, custom op.

    Args:
        fn: the live function (or method) the break is in.
        brk: the break (GB id, file line, message); an unknown id tries every source rewrite.
        calls: observed positional arguments of ``fn`` (:func:`recorded_calls`); with two or
            more, a custom op is proposed too (last: it hides the body from the graph).
    """
    text = f"{brk.gb_id or ''} {brk.message}"
    known = False
    remedies = []
    if "GB0170" in text or "Data-dependent branching" in text or "generic_jump" in text:
        # a branch on an ndarray that numpy made of Python numbers is a data-dependent jump too
        # state updated under the test (a quantiser's running min and max): selects, with the checks before it
        remedies += [propose_state_where, propose_guarded_write, propose_check, propose_branch, propose_loop, propose_numpy_scalars]
        known = True
    if any(k in text for k in ("GB0124", "GB0033", "item()", "unbacked", "data-dependent expression")):
        # two unbacked sizes a call needs equal: a torch._check; a tensor element as an index: shapes
        # stay static; a test on an unbacked size: torch.cond; attention per segment of a split: one masked call
        # a chain testing that size before what Python knows: the known operands first
        remedies += [propose_segment_mask, propose_static_first, propose_known_values, propose_size_check, propose_index_ops,
                     propose_size_branch, propose_scalar]
        known = True
    if any(k in text for k in ("GB4347", "GB9493", "tp_iternext", "C-implemented special method")):
        remedies.append(propose_loop)
        known = True
    if "GB0291" in text or "logging.Logger method" in text:  # a logging call: skipped under torch.compile
        remedies += [propose_logger_noop, propose_guarded_write]  # a log in a guard: the guard may go
        known = True
    if "Numpy" in text or "numpy" in text or "ndarray" in text:
        remedies.append(propose_numpy_scalars)
        known = True
    if not known:
        remedies = [propose_branch, propose_state_where, propose_scalar, propose_loop, propose_numpy_scalars]
    if "GB0007" in text or "marked as skipped" in text:  # a warnings.warn Dynamo skips: skipped under torch.compile too
        remedies.insert(0, propose_logger_noop)
    # buffers of `self` only exist for a method: for a plain function the remedy has nothing to say
    on_method = owner_class(fn) is not None
    branch = not known or "GB0170" in text or "generic_jump" in text
    remedies += [propose_buffer_reads, propose_buffer_ints] if on_method and branch else []
    if not known or "GB0036" in text or "Dynamic shape" in text:
        remedies += [propose_mask_count, propose_masked_reduce, propose_experts_implementation, propose_dense_experts]
    out = Proposal()
    for remedy in dict.fromkeys(remedies):
        p = remedy(fn, brk)
        out.rewrites += p.rewrites
        out.notes += p.notes if p.fits else []  # a remedy made for other code: no reason to list
    if len(calls) >= 2:  # numpy that returns an ndarray (a random mask): an op that returns a tensor
        p = propose_numpy_op(fn, brk, calls)
        out.rewrites += p.rewrites
        out.notes += p.notes
    if len(calls) >= 2:  # the opaque call alone as an op first (the rest stays in the graph), then the function
        call_op = propose_call_op(fn, brk, calls)
        whole = propose_custom_op(fn, brk, calls)
        # unless the function loops over the call's outputs in Python: it needs their values, not tensors,
        # so the whole function as an op comes first, and as early as the call's op would
        iterated = any(getattr(r, "values_iterated", False) for r in call_op.rewrites)
        if iterated:
            for r in whole.rewrites:
                r.stands_for = "call-op"
        out.rewrites += whole.rewrites + call_op.rewrites if iterated else call_op.rewrites + whole.rewrites
        out.notes += (call_op.notes if call_op.fits else []) + whole.notes
    return out
