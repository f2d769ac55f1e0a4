"""Fire an interrupt at a known point of a capture, from another thread, without timers.

:class:`InterruptAt` wraps a function; at its N-th call it starts a thread that fires the
interrupt (``_thread.interrupt_main`` or a real ``SIGINT``) and waits until it has been fired, so
the interrupt lands in that very call, whatever the machine's speed. :func:`landed_in_capture`
says whether a ``KeyboardInterrupt`` came from there (or from nstviz's interrupt latch, which
re-raises an interrupt that torch swallowed during a run).
"""

from __future__ import annotations

import re
import threading
import traceback
from collections.abc import Callable
from typing import Any


class InterruptAt:
    """Wrap ``owner.name``; at its ``at``-th call, fire the interrupt from another thread and wait
    for it to be fired before going on (so it lands in this call, during the capture)."""

    def __init__(self, owner: Any, name: str, at: int, fire: Callable[[], None]) -> None:
        self.real = getattr(owner, name)
        self.at, self.fire, self.calls = at, fire, 0
        self.fired = threading.Event()
        self.error: BaseException | None = None

    def _shoot(self) -> None:
        try:
            self.fire()
        except BaseException as exc:  # pragma: no cover - reported by the test
            self.error = exc
        finally:
            self.fired.set()

    def wrapper(self) -> Callable[..., Any]:
        real = self.real

        def interrupt_here(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.at:
                threading.Thread(target=self._shoot, name="interrupter").start()
                self.fired.wait()
            return real(*args, **kwargs)

        return interrupt_here


def landed_in_capture(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in an :class:`InterruptAt` call or by nstviz's latch for a run."""
    frames = [f.name for f in traceback.extract_tb(exc.__traceback__)]
    latched = re.fullmatch(r"interrupted during the (baseline|nonstrict|attempt-\d+) run", str(exc)) is not None
    return "interrupt_here" in frames or latched


__all__ = ["InterruptAt", "landed_in_capture"]
