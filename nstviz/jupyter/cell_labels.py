"""Give notebook cells IPython's own names in a Report: ``Cell In[3]`` instead of a temp file.

In a kernel, the code of cell 3 runs from a file like ``/tmp/ipykernel_7357/2658163650.py``
(``ipykernel``'s compiler names it), and Dynamo's stacks, breaks and the source pane would show
that name. IPython maps these names back to execution counts (``shell.compile.format_code_name``,
what its own tracebacks use: ``Cell In[3], line 4``). After a capture the magic rewrites every
location of the Report that IPython knows as a cell (break locations and stacks, regions,
marked functions, candidates, the sources' keys and paths, and ``File "...", line N`` in
tracebacks and messages) to that label, in one place; the source text stays in
``Report.sources`` under the label, so the source pane still finds it.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

from nstviz.report import Graph, Report
from nstviz.report.document import attach_user_exception as attach


def running_cell_number(shell: Any) -> int:
    """The execution count of the cell running now: the ``N`` of its ``In [N]``.

    It is the number ``run_cell`` cached the cell's code under (``shell.compile.cache``), which
    ``format_code_name`` maps back in IPython's tracebacks. ``shell.execution_count`` is not it
    everywhere: IPython 8 increments it after the cell ran, IPython 9 before the cell runs (in a
    cell it is already the next cell's number). Both versions keep the running cell's
    ``ExecutionResult`` on the display hook while the cell runs; IPython 8 leaves its count
    ``None`` for a cell run without history, and caches that cell under
    ``shell.execution_count``.
    """
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    return count if isinstance(count, int) else shell.execution_count


def _label(shell: Any, filename: str) -> str | None:
    compiler = getattr(shell, "compile", None)
    fmt = getattr(compiler, "format_code_name", None)
    if fmt is None:
        return None
    try:
        data = fmt(filename)
    except Exception:  # an unusual compiler: keep the file name
        return None
    if not data:
        return None
    kind, name = data
    return f"{kind} {name}"


def _files(report: Report) -> set[str]:
    files = set(report.sources)
    for stack in report.stacks:
        files.update(loc.file for loc in stack)
    for run in report.runs.values():
        for brk in run.breaks:
            files.add(brk.location.file)
            files.update(loc.file for loc in brk.stack)
        files.update(r.file for r in run.regions if r.file)
        files.update(m.file for m in run.marked if m.file)
    files.update(c.file for c in report.candidates if c.file)
    return files


def cell_labels(shell: Any, report: Report, own: str) -> dict[str, str]:
    """File name -> ``Cell In[N]`` for every file of ``report`` that is a cell of ``shell``.

    ``own`` is the file name the magic ran the code under. The ``%%nstrace`` cell itself (whose
    line 1 calls the magic) maps to the same cell as ``own`` (whose line 1 is the magic line as a
    comment), so both get the label; any other two files that map to one cell keep their names.
    """
    own_label = _label(shell, own)
    labels: dict[str, str] = {own: own_label} if own_label else {}
    for file in sorted(_files(report) - {own}):
        label = _label(shell, file)
        if label is not None and (label == own_label or label not in labels.values()):
            labels[file] = label
    return labels


def relabel(report: Report, labels: dict[str, str]) -> Report:
    """``report`` with every exact occurrence of a labelled file name replaced (graphs untouched)."""
    if not labels:
        return report
    texts = [(f'File "{path}", line', f"{label}, line") for path, label in labels.items()]
    # "PATH:LINE" in messages, also as torch shortens it in guard comments ("mp/ipykernel_7/1.py:3")
    tails = [
        (os.path.basename(path), path, label,
         re.compile(r"(\S*)" + re.escape(os.path.basename(path)) + r":(\d+)"))
        for path, label in labels.items() if os.path.basename(path)
    ]

    def text(s: str) -> str:
        if s in labels:
            return labels[s]
        if 'File "' in s:
            for old, new in texts:
                s = s.replace(old, new)
        for base, path, label, rx in tails:
            if base in s:
                s = rx.sub(
                    lambda m, path=path, base=base, label=label: f"{label}, line {m.group(2)}"
                    if path.endswith(m.group(1) + base) else m.group(0),
                    s,
                )
        return s

    def walk(value: Any) -> Any:
        # returns ``value`` itself when nothing in it changed
        if isinstance(value, str):
            new = text(value)
            return value if new == value else new
        if isinstance(value, Graph):
            return value  # nodes refer to stacks by index; no file names in graphs
        if isinstance(value, tuple | list):
            items = [walk(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return type(value)(items)
        if isinstance(value, dict):
            pairs = [(walk(k), walk(v)) for k, v in value.items()]
            if all(k2 is k and v2 is v for (k2, v2), (k, v) in zip(pairs, value.items(), strict=True)):
                return value
            return dict(pairs)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {}
            for f in dataclasses.fields(value):
                if not f.init or f.metadata.get("transient"):
                    continue
                old = getattr(value, f.name)
                new = walk(old)
                if new is not old:
                    changes[f.name] = new
            return dataclasses.replace(value, **changes) if changes else value
        return value

    return walk(report)


def with_cell_labels(shell: Any, report: Report, own: str) -> Report:
    """:func:`relabel` ``report`` with :func:`cell_labels` (the magic calls this once).

    Where two files get one label, the source text kept under it is ``own``'s (the code that ran).
    """
    exc = report.user_exception  # kept beside the Report: the relabelled copy must keep it too
    labels = cell_labels(shell, report, own)
    shared = {f for f, label in labels.items() if f != own and label == labels.get(own)}
    if shared and own in report.sources:
        sources = {k: v for k, v in report.sources.items() if k not in shared}
        report = dataclasses.replace(report, sources=sources)
    return attach(relabel(report, labels), exc)


__all__ = ["cell_labels", "relabel", "running_cell_number", "with_cell_labels"]
