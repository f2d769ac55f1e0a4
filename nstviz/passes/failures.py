"""Which compiles of a run failed, which frames Dynamo skipped, and which hit ``recompile_limit``.

Read by the headline (:mod:`nstviz.passes.headline`) and by the one predicate of an
improvement (:mod:`nstviz.passes.improvement`), so both say the same of a run.
"""

from __future__ import annotations

import re

from nstviz.report.model import Compile, Run
from nstviz.tracing.breaks import RECOMPILE_LIMIT_RE

__all__ = ["compile_failures", "recompile_limit_hits", "skip_reason", "skipped_frames"]


def recompile_limit_hits(run: Run) -> tuple[Compile, ...]:
    """The compiles of ``run`` refused because a frame hit ``recompile_limit``.

    Not a failure of the compile as a whole: Dynamo runs that frame eagerly from then on
    (a performance problem, said as such in the headline).
    """
    return tuple(c for c in run.compiles if c.fail_reason and RECOMPILE_LIMIT_RE.search(c.fail_reason))


def compile_failures(run: Run) -> tuple[Compile, ...]:
    """The compiles of ``run`` that failed: a ``fail_reason`` and no graph from that compile.

    A frame refused for hitting ``recompile_limit`` is not a failure (it runs eagerly; see
    :func:`recompile_limit_hits`).

    These come from Dynamo's own ``compilation_metrics`` events, so they are seen also when
    the user's code caught the exception (``try: f(x) except Exception: ...``). A frame Dynamo
    chose to skip has no ``fail_reason``; a graph break still gives a graph, or (a break at the
    very start of a frame) is logged as a break of that compile, which is not a failure.
    """
    explained = {(c.frame_id, c.compile_id) for c in run.compiles if c.graph_ids}
    for brk in run.breaks:  # a graph break logged for this compile: the frame ran on, not a failure
        for cid in brk.compile_ids:
            m = re.match(r"^\[?(\d+)/(\d+)", cid)
            if m:
                explained.add((int(m[1]), int(m[2])))
    limited = set(recompile_limit_hits(run))
    return tuple(
        c
        for c in run.compiles
        if c.fail_reason and not c.graph_ids and (c.frame_id, c.compile_id) not in explained and c not in limited
    )


_SKIPPED = re.compile(r"frame skipped:|Skipping the frame|Skipping frame")
_ANOTHER = "*** While handling this graph break, another graph break occurred: ***"


def skipped_frames(run: Run) -> tuple[Compile, ...]:
    """The compiles of ``run`` after which Dynamo gave the frame up and ran it eagerly.

    A ``fail_reason`` that says Dynamo skipped the frame (a break inside a loop: GB7000, whose
    text reads "frame skipped") and no graph from the frame; not a failure of the compile, not
    ``recompile_limit``, not a ``fullgraph=True`` failure: the frame's code runs as plain
    Python, breaks and all.
    """
    if any(b.fatal for b in run.breaks):  # fullgraph=True: said as "fullgraph failed"
        return ()
    with_graph = {c.frame_id for c in run.compiles if c.graph_ids}
    excluded = set(compile_failures(run)) | set(recompile_limit_hits(run))
    return tuple(
        c
        for c in run.compiles
        if c.fail_reason
        and _SKIPPED.search(c.fail_reason)
        and c.frame_id not in with_graph
        and c not in excluded
    )


def skip_reason(compile_: Compile) -> str:
    """Why Dynamo skipped a frame, in words: ``"a break inside a loop (GB7000)"``."""
    reason = compile_.fail_reason or ""
    last = reason.rsplit(_ANOTHER, 1)[-1].strip()
    head = last.splitlines()[0].strip() if last else ""
    if head == "graph break in loop":
        return "a break inside a loop (GB7000)"
    return head or "its compile gave up"
