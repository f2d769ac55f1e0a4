"""Rewrites of a breaking function's own code, applied live without editing the user's files.

Each remedy takes a live function and the break Dynamo reported in it (:class:`BreakSite`) and
returns a :class:`Proposal`: :class:`Rewrite` s (paste-ready source, a context manager that
installs the rewritten function where the original is looked up and always restores it, the
config it needs) and notes. :func:`verify` keeps a rewrite only when compiled outputs equal
eager on two or more input sets and ``torch._dynamo.explain`` counts fewer graphs.
"""

from __future__ import annotations

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite
from nstviz.advisor.rewrites._source import RewriteError
from nstviz.advisor.rewrites.branches import propose_branch
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
    "verify",
]


def propose(fn: object, brk: BreakSite) -> Proposal:
    """Every remedy that fits the break, in order of value: branches, scalars, loops, custom op."""
    out = Proposal()
    for remedy in _remedies(brk):
        p = remedy(fn, brk)
        out.rewrites += p.rewrites
        out.notes += p.notes
    return out


def _remedies(brk: BreakSite) -> list:
    return [propose_branch]
