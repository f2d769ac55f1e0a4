"""nstviz: see what torch.compile does to your code, and what nonstrict_trace changes.

Public API (everything else is private and may change):

- :func:`compare` and :func:`trace_code` capture a :class:`Report`; :func:`user_exception`
  gives the live exception the captured code raised (kept beside the Report, not in it).
- :class:`Report` and its parts (``nstviz.report``) are plain, versioned data; its JSON Schema
  is ``nstviz.schema``.
- The exceptions nstviz raises (``nstviz.errors``, the tree in its docstring), all exported here:
  :class:`NstvizError` and its children, :class:`TraceLogError` (``nstviz ingest``) and its children.
- ``%load_ext nstviz`` registers the ``%nstrace`` / ``%%nstrace`` magics; the ``nstviz`` command.

Private (importable, but no stability promise): ``nstviz.capture`` (live capture),
``nstviz.passes`` (the passes that build a Report), ``nstviz.advisor``, ``nstviz.offline``
(record, ingest, diff), ``nstviz.cli`` (use the ``nstviz`` command), ``nstviz.render``
(use :meth:`Report.summary` and :meth:`Report.save_html`), ``nstviz.tracing`` and ``nstviz.jupyter``
(use the magics).
"""

from __future__ import annotations

from nstviz._version import __version__
from nstviz.errors import (
    CorruptLogError,
    ForeignLogError,
    NameResolutionError,
    NothingCompiledError,
    NotMarkableError,
    NstvizError,
    ReportFormatError,
    TraceLogError,
    TruncatedLogError,
    UnsupportedTorchError,
    UsageError,
)
from nstviz.report import SCHEMA_VERSION, Report

__all__ = [
    "SCHEMA_VERSION",
    "CorruptLogError",
    "ForeignLogError",
    "NameResolutionError",
    "NotMarkableError",
    "NothingCompiledError",
    "NstvizError",
    "Report",
    "ReportFormatError",
    "TraceLogError",
    "TruncatedLogError",
    "UnsupportedTorchError",
    "UsageError",
    "__version__",
    "compare",
    "trace_code",
    "user_exception",
]


def __getattr__(name: str) -> object:
    # compare/trace_code import torch: load them on first use so `import nstviz` stays light.
    if name in ("compare", "trace_code", "user_exception"):
        from nstviz import api

        return getattr(api, name)
    raise AttributeError(f"module 'nstviz' has no attribute {name!r}")


def load_ipython_extension(ipython: object) -> None:
    """Register the ``%nstrace`` / ``%%nstrace`` magics (``%load_ext nstviz``)."""
    from nstviz.jupyter import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: object) -> None:
    """Remove the magics (``%unload_ext nstviz``)."""
    from nstviz.jupyter import unload_ipython_extension as _unload

    _unload(ipython)
