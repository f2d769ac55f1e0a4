"""Reading a capture's progress event, for every front end (the CLI's display, the magic's widget).

The Session calls ``progress`` with one dict (``phase``, ``message``, ``elapsed_s``,
``runs_done``, ``runs_total``); a front end's own callback may also be called with an object
carrying these attributes, or positionally as ``(phase, message[, runs_done, runs_total])``.
:func:`progress_event` turns any of these into the dict. Torch-free.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EVENT_FIELDS: tuple[str, ...] = ("phase", "message", "runs_done", "runs_total")
"""The fields a progress event may give positionally, in order."""


def progress_event(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The progress event of a callback's ``(*args, **kwargs)`` as a dict.

    Accepts a dict, an object with attributes (``__dict__`` or ``__slots__``), or the fields
    positionally (:data:`EVENT_FIELDS`); keyword arguments are added (over a dict or object,
    they win; positionally, the positional value wins).
    """
    if len(args) == 1 and isinstance(args[0], Mapping):
        return {**args[0], **kwargs}
    if len(args) == 1 and not isinstance(args[0], str) and hasattr(args[0], "__dict__"):
        return {**vars(args[0]), **kwargs}
    if len(args) == 1 and hasattr(args[0], "__slots__"):
        obj = args[0]
        return {k: getattr(obj, k) for k in obj.__slots__ if hasattr(obj, k)} | dict(kwargs)
    event = dict(kwargs)
    for key, value in zip(EVENT_FIELDS, args, strict=False):
        event.setdefault(key, value)
    return event


__all__ = ["EVENT_FIELDS", "progress_event"]
