"""Live -> plain values, shared by the capture session and ``nstviz record``.

A traced call's function becomes a :class:`~nstviz.passes.provenance.CallSite` (qualified name,
source range); the files a run names become the Report's source texts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from nstviz.capture import marking
from nstviz.capture._introspect import qualified_name, unwrap
from nstviz.passes.provenance import CallSite
from nstviz.report import Location, NonInputRead, Run, SourceFile
from nstviz.tracing.stacks import read_sources

__all__ = ["call_site", "source_paths", "sources"]


def call_site(call: Any, *, reads: tuple[NonInputRead, ...] = ()) -> CallSite:
    """One traced call (``nonstrict_trace`` or ``leaf_function``, see the runner) as a :class:`CallSite`."""
    fn = unwrap(call.function) if call.function is not None else None
    file, start, end = marking.source_range(fn) if fn is not None else (None, None, None)
    return CallSite(
        graph_id=call.graph_id,
        node=call.node,
        qualname=qualified_name(fn) if fn is not None else call.name,
        file=file,
        line_start=start,
        line_end=end,
        reads=reads,
    )


def source_paths(
    run: Run, *, sites: Iterable[CallSite] = (), marks: Iterable[str | None] = (), compiles: bool = True
) -> list[str]:
    """The files ``run`` names, in order: its breaks, call sites, regions, marked functions' files, compiles."""
    paths: list[str] = []
    for b in run.breaks:
        paths.append(b.location.file)
        paths.extend(loc.file for loc in b.stack)
    paths.extend(s.file for s in sites if s.file)
    for region in run.regions:
        if region.file:
            paths.append(region.file)
        if region.call_site is not None:
            paths.append(region.call_site.file)
    paths.extend(f for f in marks if f)
    if compiles:
        paths.extend(c.location.file for c in run.compiles if c.location is not None)
    return paths


def sources(stacks: Sequence[Sequence[Location]], paths: Iterable[str]) -> dict[str, SourceFile]:
    """Text of every readable user file of the stacks, then of ``paths`` (first mention first)."""
    return read_sources([*(loc.file for stack in stacks for loc in stack), *paths])
