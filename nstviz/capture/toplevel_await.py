"""Top-level ``await`` in traced code, as IPython's autoawait allows in any notebook cell.

The code is compiled with ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT`` (statement by statement, like all
traced code); a statement that awaits compiles to a coroutine code object, whose coroutine is
run to completion here, in the calling thread, so that its compiles are captured like any other.

Where it runs: on a new event loop of its own, closed afterwards (like ``asyncio.run``). In a
Jupyter kernel the kernel's own loop is running in this very thread while the cell executes;
it is set aside for the duration (``asyncio``'s running-loop slot is cleared and put back in
``finally``), as a loop cannot be re-entered. Consequence: objects bound to the kernel's loop
(a future or task created by an earlier cell) cannot be awaited inside ``%%nstrace``;
coroutines, ``asyncio.sleep``, ``gather`` and libraries that open their own connections work.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from types import CodeType
from typing import Any

COMPILE_FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
"""Extra ``compile()`` flags for traced code."""


def is_async(code: CodeType) -> bool:
    """Whether ``code`` (compiled with :data:`COMPILE_FLAGS`) awaits at top level."""
    return bool(code.co_flags & inspect.CO_COROUTINE)


def run_to_completion(coro: Any) -> Any:
    """Run ``coro`` on a new event loop in this thread (see the module docstring); return its value."""
    running = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
            asyncio.events._set_running_loop(running)


def run_statement(code: CodeType, namespace: dict[str, Any]) -> None:
    """``exec(code, namespace)``, awaiting the statement when it awaits at top level."""
    if is_async(code):
        run_to_completion(eval(code, namespace))
    else:
        exec(code, namespace)


__all__ = ["COMPILE_FLAGS", "is_async", "run_statement", "run_to_completion"]
