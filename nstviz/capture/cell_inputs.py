"""Rewrites and their check on other inputs for code run as a cell (``trace_code``, ``%%nstrace``).

A cell runs its ``def`` s again on every run, so a rewrite installed on the function object the
advisor resolved would miss the new one the next run defines (and with it the compiled
wrapper's function): :func:`rewrites_redefined` swaps the rewritten code into every new
definition from the same ``def`` (same file, line and qualname) that the namespace holds, also
behind a ``torch.compile`` wrapper, and always puts the code back.

A cell has no inputs of its own; :func:`cell_calls` finds the compiled calls it makes (run once
with Dynamo disabled, every outermost ``torch.compile`` wrapper call noted), so a rewrite can be
checked on other inputs of the same shapes and dtypes like ``compare()``'s callable.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from nstviz.capture import _torch_compat
from nstviz.capture.observed_calls import observing_compiled_calls

__all__ = ["cell_calls", "rewrites_redefined"]


def _key(fn: Any) -> tuple[str, int, str] | None:
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None:
        return None
    return (code.co_filename, code.co_firstlineno, fn.__qualname__)


def _functions(namespace: Mapping[str, Any]) -> Iterator[types.FunctionType]:
    for value in list(namespace.values()):
        if isinstance(value, types.FunctionType):
            yield value
            original = value.__dict__.get("_torchdynamo_orig_callable")  # the function a compiled wrapper calls
            if isinstance(original, types.FunctionType):
                yield original


@contextlib.contextmanager
def rewrites_redefined(rewrites: Iterable[Any], namespace: Mapping[str, Any] | None) -> Iterator[Callable[[], None]]:
    """Yield ``refresh()``: it puts each rewrite's code into the namespace's new definitions of its function.

    Only where the closures line up (a cell's top-level ``def`` has none); restored after the
    block, also on errors. Enter it before the rewrites are applied: the functions are keyed
    by their code as written.
    """
    wanted = {}
    for r in rewrites:
        key = _key(getattr(r, "original", None))
        if key is not None:
            wanted[key] = r
    swapped: list[tuple[types.FunctionType, types.CodeType]] = []

    def refresh() -> None:
        if not namespace or not wanted:
            return
        for fn in _functions(namespace):
            r = wanted.get(_key(fn))  # type: ignore[arg-type]
            if r is None or fn is r.original or fn.__code__ is r.function.__code__:
                continue
            if fn.__code__.co_freevars != r.function.__code__.co_freevars or fn.__closure__:
                continue
            swapped.append((fn, fn.__code__))
            fn.__code__ = r.function.__code__

    try:
        yield refresh
    finally:
        for fn, code in reversed(swapped):
            fn.__code__ = code


def cell_calls(body: Callable[[Callable[[], None]], Any]) -> list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]:
    """``(function, args, kwargs)`` of the first call of each compiled function the code makes.

    The code runs once with Dynamo disabled (nothing compiles); the caller restores the state
    around it. Empty when no compiled call was seen (or the code raised).
    """
    seen: dict[int, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {}
    try:
        with _torch_compat.dynamo_config_patch({"disable": True}), observing_compiled_calls() as observed:
            body(lambda: None)
    except Exception:  # the code failed eagerly: no inputs to vary
        return []
    for call in observed:
        if isinstance(call.original, types.FunctionType) and id(call.original) not in seen:
            seen[id(call.original)] = (call.original, call.args, call.kwargs)
    return list(seen.values())
