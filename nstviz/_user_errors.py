"""The live exception the user's code raised, kept beside the Report it belongs to.

A :class:`~nstviz.report.Report` is plain data: it never holds a live object. The capture
still has to hand the user's exception back (``%%nstrace`` re-raises it after showing the
widget, :meth:`Report.raise_user_error` re-raises it in a script), so it is kept beside the
Report, keyed by its identity and dropped when the Report is garbage-collected. The store is
in :mod:`nstviz.report.document` (so that :attr:`Report.user_exception` imports nothing).
"""

from __future__ import annotations

from nstviz.report.document import Report, attach_user_exception


def attach(report: Report, exc: BaseException | None) -> Report:
    """Keep ``exc`` as the live exception of ``report`` (until the Report is collected); return the Report."""
    return attach_user_exception(report, exc)


def user_exception(report: Report) -> BaseException | None:
    """The live exception attached to ``report``, or None."""
    return report.user_exception
