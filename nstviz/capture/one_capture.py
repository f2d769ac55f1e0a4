"""One capture at a time, process-wide.

nstviz patches process-wide torch state (trace rules, the backend call, the trace logger, RNG,
Dynamo's caches), so two captures at once would undo each other.
"""

from __future__ import annotations

import threading

from nstviz.errors import UsageError

__all__ = ["acquire", "release"]

_CAPTURE_LOCK = threading.Lock()
_capture_thread: list[int] = []


def acquire() -> None:
    """Take the capture for this thread; a clear UsageError when a capture is running already."""
    if _CAPTURE_LOCK.acquire(blocking=False):
        _capture_thread[:] = [threading.get_ident()]
        return
    if _capture_thread and _capture_thread[0] == threading.get_ident():
        raise UsageError(
            "nstviz is already capturing in this thread: the code being captured called "
            "nstviz.compare/trace_code (or %nstrace) itself; remove the nested call"
        )
    raise UsageError(
        "another nstviz capture is running in another thread; nstviz captures one at a time "
        "(it patches process-wide torch state); wait for it to finish, then run this again"
    )


def release() -> None:
    """Give the capture back (after :func:`acquire`)."""
    _capture_thread.clear()
    _CAPTURE_LOCK.release()
