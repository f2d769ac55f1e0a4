"""Which compiles of a run failed, which frames Dynamo skipped, and which hit ``recompile_limit``.

Read by the headline (:mod:`nstviz.passes.headline`) and by the one predicate of an
improvement (:mod:`nstviz.passes.improvement`), so both say the same of a run.
"""

from __future__ import annotations

import re

from nstviz._where import original_function, where
from nstviz.report.model import Compile, Run

__all__ = [
    "compile_failures",
    "frame_where",
    "recompile_limit_help",
    "recompile_limit_hits",
    "skip_reason",
    "skipped_frames",
]

_LIMIT_RE = re.compile(r"currently set to (\d+)")


def recompile_limit_hits(run: Run) -> tuple[Compile, ...]:
    """The compiles of ``run`` refused because a frame hit ``recompile_limit``.

    Not a failure of the compile as a whole: Dynamo runs that frame eagerly from then on
    (a performance problem, said as such in the headline).
    """
    return tuple(c for c in run.compiles if c.limit_hit)


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
        explained.update(cid.frame_compile for cid in brk.compile_ids)
    limited = set(recompile_limit_hits(run))
    return tuple(
        c
        for c in run.compiles
        if c.fail_reason and not c.graph_ids and (c.frame_id, c.compile_id) not in explained and c not in limited
    )


def recompile_limit_help(run: Run, hit: Compile) -> str:
    """What a ``recompile_limit`` hit means, naming the frame, its file and the guard that failed last.

    ``"Dynamo compiled step (/x/rc.py:5) as many times as torch._dynamo.config.recompile_limit
    allows (2); at compile 0/2 a guard failed again (n == 1, /x/rc.py:7), so Dynamo gave up on
    this frame: from then on step runs eagerly (uncompiled) whenever no compiled version's guards
    pass. Compile 0/2 has the details."``
    """
    same = [c for c in run.compiles if c.frame_id == hit.frame_id and (c.function or c.location)]
    named = next((c for c in same if c.function), hit)
    fn = named.qualname or original_function(named.function)[0] or "a frame"
    loc = hit.location or named.location
    at = f" ({where(loc.file, loc.line)})" if loc else ""
    m = _LIMIT_RE.search(hit.fail_reason or "")
    limit = f" ({m[1]})" if m else ""
    failed = ""
    if hit.guard_failures:
        g = hit.guard_failures[0]
        gat = f", {where(g.location.file, g.location.line)}" if g.location else ""
        failed = f"; at compile {hit.tlparse_id} a guard failed again ({g.guard}{gat})"
    return (
        f"Dynamo compiled {fn}{at} as many times as torch._dynamo.config.recompile_limit allows{limit}{failed}, "
        f"so Dynamo gave up on this frame: from then on {fn} runs eagerly (uncompiled) whenever no compiled "
        f"version's guards pass. Compile {hit.tlparse_id} has the details."
    )


def frame_where(run: Run, c: Compile) -> str:
    """``"models/gpt2.py:380"``: where the frame of compile ``c`` starts (last two path parts), or ``""``."""
    loc = c.location or next((x.location for x in run.compiles if x.frame_id == c.frame_id and x.location), None)
    if loc is None:
        return ""
    return where(loc.file, loc.line, lambda f: "/".join(f.replace("\\", "/").split("/")[-2:]))
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
