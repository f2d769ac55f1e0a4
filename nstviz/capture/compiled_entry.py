"""Make a nonstrict mark on the function ``torch.compile`` compiles take effect, as torch does.

With ``@torch.compile`` over ``@nonstrict_trace``, torch sees at ``torch.compile`` time that
the trace rules mark the function and wraps it (``torch/_dynamo/eval_frame.py``:
``external_utils.wrap_inline``): Dynamo compiles the wrapper's frame and traces its call of the
function non-strictly (a class defined inside it then compiles; a ``dict_items``, ndarray or
Python float crossing the boundary is refused, GB0236/GB0251). nstviz marks by id after the
``def`` has run, when the compiled wrapper already exists: :func:`compiled_entries_wrapped`
points each such wrapper at ``wrap_inline(fn)`` while the function is marked and always puts
it back (:func:`nstviz.capture._torch_compat.top_frame_wrapped`).

The wrappers are found without scanning the heap: a compiled wrapper given as the function
to mark (``trace_code`` re-finds the cell's ``@torch.compile def f`` that way), one bound
in the function's own module globals (``f = torch.compile(g)``, a cell's namespace), or one
nstviz made itself (:func:`nstviz.compare` compiling a plain function: :func:`own_wrapper`).
"""

from __future__ import annotations

import contextlib
import types
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from nstviz.capture import _torch_compat

__all__ = ["compiled_entries", "compiled_entries_wrapped", "own_wrapper"]

# id(function) -> the torch.compile wrapper nstviz made of it; an entry lives as long as its
# wrapper (which holds the function, so the id cannot be reused meanwhile)
_OWN_WRAPPERS: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def own_wrapper(wrapper: Any, function: Any) -> Any:
    """Remember that nstviz compiled ``function`` as ``wrapper`` (returned), for marking it."""
    if _original_of(wrapper) is function:
        _OWN_WRAPPERS[id(function)] = wrapper
    return wrapper


def _original_of(value: Any) -> Any:
    """The function a ``torch.compile`` function wrapper wraps (from its own ``__dict__``), or None."""
    if not isinstance(value, types.FunctionType):
        return None
    original = value.__dict__.get("_torchdynamo_orig_callable")
    return original if isinstance(original, types.FunctionType) else None


def compiled_entries(functions: Iterable[Callable[..., Any]]) -> list[tuple[Any, Any]]:
    """``(compiled wrapper, the function it compiles)`` for the functions to mark.

    A wrapper among ``functions`` stands for its function; a plain function's wrappers are
    looked up in its module globals.
    """
    found: dict[int, tuple[Any, Any]] = {}
    for f in functions:
        original = _original_of(f)
        if original is not None:
            found[id(f)] = (f, original)
            continue
        if not isinstance(f, types.FunctionType):
            continue
        own = _OWN_WRAPPERS.get(id(f))
        if own is not None:
            found[id(own)] = (own, f)
        for value in list(f.__globals__.values()):
            if _original_of(value) is f:
                found[id(value)] = (value, f)
    return list(found.values())


@contextlib.contextmanager
def compiled_entries_wrapped(entries: Iterable[tuple[Any, Any]]) -> Iterator[None]:
    """Point each compiled wrapper at ``wrap_inline(fn)`` while the block runs; always undone."""
    with contextlib.ExitStack() as stack:
        for wrapper, _ in entries:
            stack.enter_context(_torch_compat.top_frame_wrapped(wrapper))
        yield
