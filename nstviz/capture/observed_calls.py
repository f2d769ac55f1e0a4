"""Which compiled calls a cell made: every outermost call of a ``torch.compile`` wrapper, noted live.

The magic's ``--time`` re-runs only these calls (:func:`nstviz.capture.timing.time_calls`), since
a cell may have side effects.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from nstviz.capture import _torch_compat


@dataclass(frozen=True, slots=True)
class CompiledCall:
    """One call of a ``torch.compile`` wrapper, seen by :func:`observing_compiled_calls`.

    ``original`` is what the wrapper wraps (for a compiled module, its ``_orig_mod.__call__``),
    ``args``/``kwargs`` the live objects it was called with (re-running sees their state then,
    not as they were), ``context`` the wrapper's Dynamo context (backend and flags).
    """

    original: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    context: Any


@contextlib.contextmanager
def observing_compiled_calls() -> Iterator[list[CompiledCall]]:
    """Note every outermost call of a ``torch.compile`` wrapper made in this thread during the block.

    Yields the list the calls are appended to (in order). A call of a wrapper inside another
    one is part of the outer call and not listed. Works with ``sys.setprofile`` (every Python
    call of the block pays a little for it), only when no other profiler is set; otherwise,
    and on a torch whose wrapper looks different, the list stays empty and ``observed.note``
    says why (``observed`` is the list; ``note`` is None when observing worked).
    """
    observed = _Observed()
    code = _torch_compat.compile_wrapper_code()
    previous = sys.getprofile()
    if code is None:
        observed.note = "this torch's torch.compile wrapper is not recognised: no compiled calls were observed"
        yield observed
        return
    if previous is not None:
        observed.note = "another profiler is active (sys.setprofile): no compiled calls were observed"
        yield observed
        return
    depth = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal depth
        if frame.f_code is not code:
            return
        if event == "call":
            if depth == 0:
                local = frame.f_locals
                observed.append(
                    CompiledCall(
                        original=local["fn"], args=tuple(local.get("args", ())),
                        kwargs=dict(local.get("kwargs", {})), context=local["self"],
                    )
                )
            depth += 1
        elif event == "return":
            depth = max(0, depth - 1)

    sys.setprofile(profile)
    try:
        yield observed
    finally:
        if sys.getprofile() is profile:
            sys.setprofile(previous)


class _Observed(list):  # type: ignore[type-arg]
    """The calls :func:`observing_compiled_calls` saw, and why none were, if so."""

    note: str | None = None
