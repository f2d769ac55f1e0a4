"""User source text a single-run Report refers to (for the viewer's source pane)."""

from __future__ import annotations

from collections.abc import Sequence

from nstviz.report import Location, Run, SourceFile
from nstviz.tracing.stacks import read_sources


def sources_of(run: Run, stacks: Sequence[Sequence[Location]]) -> dict[str, SourceFile]:
    """Text of every readable user file named by the run's stacks, breaks, regions and marks."""
    paths: list[str] = []
    for stack in stacks:
        paths.extend(loc.file for loc in stack)
    for brk in run.breaks:
        paths.append(brk.location.file)
        paths.extend(loc.file for loc in brk.stack)
    for region in run.regions:
        if region.file:
            paths.append(region.file)
        if region.call_site is not None:
            paths.append(region.call_site.file)
    for mark in run.marked:
        if mark.file:
            paths.append(mark.file)
    return read_sources(paths)
