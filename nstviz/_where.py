"""How a source location is written for people: ``file:line``, or IPython's ``Cell In[3], line 4``.

Frames of notebook cells carry the kernel's temporary file name; the magic stores IPython's own
label for them in the Report (``Location.file == "Cell In[3]"``, see
:mod:`nstviz.jupyter.cell_labels`), and every place that shows a location writes it the way
IPython's tracebacks do. The viewer has the same rule (``js/src/ui/format.js``: ``where``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

CELL_LABEL = re.compile(r"Cell In\[\d+\]")
"""A notebook cell's label, as IPython writes it in tracebacks."""


def is_cell_label(file: str | None) -> bool:
    """Whether ``file`` is a notebook cell label such as ``Cell In[3]``."""
    return bool(file) and CELL_LABEL.fullmatch(file) is not None


def where(file: str | None, line: int | str | None, short: Callable[[str], str] = str) -> str:
    """``Cell In[3], line 4`` for a cell, else ``short(file):line`` (``?`` for what is unknown)."""
    shown_line = "?" if line is None else line
    if file is not None and is_cell_label(file):
        return f"{file}, line {shown_line}"
    return f"{short(file) if file else '?'}:{shown_line}"


__all__ = ["CELL_LABEL", "is_cell_label", "original_function", "where"]


_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")


def original_function(name: str, line: int | None = None) -> tuple[str, int | None]:
    """``("forward", 36)`` for Dynamo's resume function ``torch_dynamo_resume_in_forward_at_36``.

    Other names come back as they are, with ``line``.
    """
    m = _RESUME_RE.match(name)
    while m:  # a resume function of a resume function
        name, line = m["fn"], int(m["line"])
        m = _RESUME_RE.match(name)
    return name, line
