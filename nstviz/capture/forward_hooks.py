"""Make nonstrict marks on ``nn.Module.forward`` take effect for ``module(...)`` calls.

torch 2.13 ignores a nonstrict mark on a module's ``forward`` when the module is called as
``module(...)`` and has no hooks: Dynamo's nn.Module call path never consults the mark. With a
forward pre-hook registered (on the instance, or globally), the call goes through
``_call_impl`` and a bound-method call of ``forward``, which honours it.
:func:`effective_forwards` registers a global no-op pre-hook while a ``forward`` is marked
(or per instance, when given the instances), and always removes it afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["FORWARD_HOOK_CODE", "effective_forwards", "forward_owner", "is_forward"]

FORWARD_HOOK_CODE = (
    "# torch 2.13 honours a nonstrict mark on `forward` only for modules with a forward pre-hook:\n"
    "torch.nn.modules.module.register_module_forward_pre_hook(lambda module, args: None)\n"
)
"""The code a user runs so that marks on ``forward`` take effect (a global no-op pre-hook)."""


def _no_op_pre_hook(module: Any, args: Any) -> None:
    return None


def is_forward(fn: Any) -> bool:
    """Whether ``fn`` is (or is wrapped as) a method named ``forward``."""
    return getattr(fn, "__name__", None) == "forward" or getattr(
        getattr(fn, "__code__", None), "co_name", None
    ) == "forward"


def _wraps_chain(fn: Any) -> list[Any]:
    out = [fn]
    for _ in range(8):
        fn = getattr(fn, "__wrapped__", None)
        if fn is None:
            break
        out.append(fn)
    return out


def forward_owner(module_type: type, fn: Any) -> bool:
    """Whether ``module_type.forward`` is ``fn`` or a ``functools.wraps`` wrapper around it."""
    forward = getattr(module_type, "forward", None)
    return forward is not None and any(f is fn for f in _wraps_chain(forward))


@contextlib.contextmanager
def effective_forwards(
    functions: Iterable[Callable[..., Any]], modules: Iterable[Any] | None = None
) -> Iterator[int]:
    """While the block runs, marked forwards take effect for ``module(...)`` calls.

    By default one global no-op forward pre-hook is registered
    (``register_module_forward_pre_hook``), exactly what the advisor's code tells users to
    run: it also covers modules the code creates while it runs (a script or cell that builds
    its model). With ``modules``, a no-op pre-hook goes on each of those instances whose
    class's ``forward`` is marked instead. Everything is removed on exit, also on errors.

    Args:
        functions: the functions being marked; only those named ``forward`` matter.
        modules: module instances to hook one by one instead of the global hook.

    Yields:
        The number of hooks registered.
    """
    forwards = [f for f in functions if is_forward(f)]
    handles: list[Any] = []
    try:
        if forwards and modules is None:
            import torch

            handles.append(torch.nn.modules.module.register_module_forward_pre_hook(_no_op_pre_hook))
        elif forwards:
            by_type: dict[type, bool] = {}
            for m in modules or ():
                t = type(m)
                if t not in by_type:
                    by_type[t] = any(forward_owner(t, f) for f in forwards)
                if by_type[t]:
                    handles.append(m.register_forward_pre_hook(_no_op_pre_hook))
        yield len(handles)
    finally:
        for h in handles:
            h.remove()
