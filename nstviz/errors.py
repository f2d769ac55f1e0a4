"""Exceptions nstviz raises.

Hierarchy::

    NstvizError                      base of everything nstviz raises on purpose
    ├── UsageError                   bad arguments or options (what was wrong, what to do)
    │   ├── NameResolutionError      a --nonstrict name that is unknown or ambiguous
    │   └── NotMarkableError         a target nonstrict_trace cannot take (builtin, class, lambda...)
    ├── NothingCompiledError         the code ran but torch.compile compiled nothing
    ├── UnsupportedTorchError        the installed torch lacks what nstviz needs (says which version)
    ├── ReportFormatError            a Report JSON that is corrupt or from a newer schema
    └── TraceLogError                a TORCH_TRACE log nstviz cannot read (``nstviz ingest``)
        ├── ForeignLogError          the file is not a TORCH_TRACE log at all
        ├── CorruptLogError          a TORCH_TRACE log whose records cannot be decoded
        └── TruncatedLogError        a log cut off before its first complete record

Errors raised by the user's own code are not wrapped: they are recorded in the Report
(``Run.error``) and, in the magics, re-shown with their normal traceback.
Every message says what happened, shows the offending value, and says what to do next.
"""

from __future__ import annotations


class NstvizError(Exception):
    """Base class of every error nstviz raises on purpose."""


class UsageError(NstvizError, ValueError):
    """Bad arguments or options given to an nstviz API, magic or command."""


class NameResolutionError(UsageError, LookupError):
    """A name given to ``nonstrict=`` could not be resolved to exactly one function."""


class NotMarkableError(UsageError, TypeError):
    """A ``nonstrict=`` target that ``torch._dynamo.nonstrict_trace`` cannot take."""


class NothingCompiledError(NstvizError):
    """The code ran, but ``torch.compile`` compiled no frame, so there is nothing to compare."""


class UnsupportedTorchError(NstvizError, RuntimeError):
    """The installed torch lacks an API nstviz needs; the message names the version needed."""


class ReportFormatError(NstvizError, ValueError):
    """A Report (JSON) that is corrupt, incomplete, or from a newer schema version."""


class TraceLogError(NstvizError, ValueError):
    """A TORCH_TRACE log that cannot be ingested; the message names the file and the cause."""


class ForeignLogError(TraceLogError):
    """The file is not a TORCH_TRACE log (no glog-style line with a JSON record in it)."""


class CorruptLogError(TraceLogError):
    """A TORCH_TRACE log whose records cannot be decoded (binary data, a broken gzip stream)."""


class TruncatedLogError(TraceLogError):
    """A TORCH_TRACE log that is empty or ends before its first complete record."""


__all__ = [
    "CorruptLogError",
    "ForeignLogError",
    "NameResolutionError",
    "NotMarkableError",
    "NothingCompiledError",
    "NstvizError",
    "ReportFormatError",
    "TraceLogError",
    "TruncatedLogError",
    "UnsupportedTorchError",
    "UsageError",
]
