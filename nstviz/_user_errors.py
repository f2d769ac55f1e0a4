"""The live exception the user's code raised, kept beside the Report it belongs to.

A :class:`~nstviz.report.Report` is plain data: it never holds a live object. The capture
still has to hand the user's exception back (``%%nstrace`` re-raises it after showing the
widget, :meth:`Report.raise_user_error` re-raises it in a script), so it is kept here, keyed
by the Report's identity and dropped when the Report is garbage-collected.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nstviz.report import Report

_LOCK = threading.Lock()
_EXCEPTIONS: dict[int, BaseException] = {}


def attach(report: Report, exc: BaseException | None) -> Report:
    """Keep ``exc`` as the live exception of ``report`` (until the Report is collected); return the Report."""
    if exc is None:
        return report
    key = id(report)
    with _LOCK:
        _EXCEPTIONS[key] = exc
    weakref.finalize(report, _forget, key)
    return report


def user_exception(report: Report) -> BaseException | None:
    """The live exception attached to ``report``, or None."""
    with _LOCK:
        return _EXCEPTIONS.get(id(report))


def _forget(key: int) -> None:
    with _LOCK:
        _EXCEPTIONS.pop(key, None)
