"""Function introspection: the one place nstviz unwraps callables and names them.

Used by the capture (which function a ``nonstrict_trace`` call, a mark or a compiled object
stands for), the advisor (is a candidate a plain Python function, an ``nn.Module`` method)
and the non-input read scan. Every loop through wrappers stops after :data:`MAX_UNWRAP`
steps, so a self-referencing ``__wrapped__`` cannot hang a capture.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

MAX_UNWRAP = 16
"""Wrapper layers followed at most (decorators, partials, bound methods)."""


def unwrap(obj: Any) -> Any:
    """The callable behind wrappers, or ``obj`` itself when it wraps nothing.

    Follows ``staticmethod``/``classmethod``, bound methods, ``functools.partial``,
    ``__wrapped__`` chains (``functools.wraps``, ``nonstrict_trace``) and functions wrapped by
    ``torch.compile`` (``_torchdynamo_orig_callable``).
    """
    for _ in range(MAX_UNWRAP):
        if isinstance(obj, (staticmethod, classmethod)) or isinstance(obj, types.MethodType):
            obj = obj.__func__
        elif isinstance(obj, functools.partial):
            obj = obj.func
        elif getattr(obj, "_torchdynamo_orig_callable", None) is not None:  # a compiled function
            obj = _compiled_original(obj)
        elif callable(getattr(obj, "__wrapped__", None)) and not isinstance(obj, type):
            obj = obj.__wrapped__
        else:
            break
    return obj


def _compiled_original(obj: Any) -> Any:
    from nstviz.capture import _torch_compat

    return _torch_compat.compiled_original(obj, modules=False)


def unwrap_bound(obj: Any) -> tuple[types.FunctionType | None, Any]:
    """``(plain Python function, the instance it is bound to or None)`` behind ``obj``.

    Like :func:`unwrap`, and a callable instance gives its class's ``__call__`` bound to it.
    The function is None for builtins and other callables without Python bytecode.
    """
    instance = None
    for _ in range(MAX_UNWRAP):
        if isinstance(obj, types.MethodType):
            instance = obj.__self__
            obj = obj.__func__
            continue
        inner = unwrap(obj)
        if inner is not obj:
            obj = inner
            continue
        if isinstance(obj, types.FunctionType):
            return obj, instance
        if (
            callable(obj)
            and not isinstance(obj, type)
            and isinstance(inspect.getattr_static(type(obj), "__call__", None), types.FunctionType)
        ):
            instance = obj
            obj = type(obj).__call__
            continue
        return None, instance
    return (obj if isinstance(obj, types.FunctionType) else None), instance


def entry_function(obj: Any) -> Any:
    """What a call of ``obj`` runs first: a method's function, a module's ``forward``, else ``obj``."""
    if isinstance(obj, types.MethodType):
        return obj.__func__
    forward = getattr(type(obj), "forward", None)
    if forward is not None and not isinstance(obj, types.FunctionType):
        return forward
    return obj


def qualified_name(fn: Any) -> str:
    """``Qual.name`` of a function or class (no module prefix), else its ``repr``."""
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return str(qual)


def owner_class(func: Any) -> type | None:
    """The class a function is defined in, found from its ``__qualname__`` in its globals.

    None for module-level and local (``<locals>``) functions, and when the class cannot be
    reached from the function's module.
    """
    func = unwrap(func)
    parts = str(getattr(func, "__qualname__", "")).split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    owner: Any = (getattr(func, "__globals__", None) or {}).get(parts[0])
    for part in parts[1:-1]:
        owner = getattr(owner, part, None)
    return owner if isinstance(owner, type) else None


def is_module_method(func: Any) -> bool:
    """True when ``func`` is defined in a ``torch.nn.Module`` subclass."""
    owner = owner_class(func)
    if owner is None:
        return False
    import torch

    return issubclass(owner, torch.nn.Module)


def code_key(fn: Any) -> Any:
    """Identity of a function's code that survives re-running its ``def``: (file, first line, qualname).

    Objects without Python code are keyed by ``id``.
    """
    fn = unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return id(fn)
    return (code.co_filename, code.co_firstlineno, getattr(fn, "__qualname__", code.co_name))


__all__ = [
    "MAX_UNWRAP",
    "code_key",
    "entry_function",
    "is_module_method",
    "owner_class",
    "qualified_name",
    "unwrap",
    "unwrap_bound",
]
