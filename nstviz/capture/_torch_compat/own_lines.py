"""The op's own source line inside a non-strict function, kept on its ATen node.

AOTAutograd traces a ``nonstrict_trace`` call by running the user's function in Python
(``torch._higher_order_ops.flat_apply.impl``). FX gives every node it creates the
``stack_trace`` of the Dynamo node being interpreted (``fx_traceback.current_meta``): the
call site. The lines inside the function are lost. While :func:`own_lines` is active, each op
the function runs under that tracing appends the function's own frames (the Python stack
below ``impl``) to ``current_meta["stack_trace"]`` for the time the op is traced, so its node
reads ``call site > ... > own line``. Outside AOT tracing (Dynamo's fake run, eager) nothing
changes. Degradable: a torch without these names keeps the call site only (noted).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import traceback
from collections.abc import Iterator
from typing import Any

from nstviz.capture._torch_compat.hooks import lose


def _modules() -> tuple[Any, Any, Any] | None:
    try:
        # the module, not the operator ``torch._higher_order_ops.flat_apply`` re-exported over its name
        flat_apply_mod = importlib.import_module("torch._higher_order_ops.flat_apply")
        from torch.fx import traceback as fx_traceback
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:
        return None
    if not callable(getattr(flat_apply_mod, "impl", None)) or not hasattr(fx_traceback, "current_meta"):
        return None
    if not callable(getattr(fx_traceback, "has_preserved_node_meta", None)):
        return None
    return flat_apply_mod, fx_traceback, TorchDispatchMode


def _own_frames(stop: Any) -> str:
    """The frames between ``stop`` (the patched ``impl``'s frame) and here, FX's text form."""
    frames: list[Any] = []
    f = sys._getframe(2)
    while f is not None and f is not stop:
        frames.append(f)
        f = f.f_back
    if f is None:
        return ""
    summary = traceback.StackSummary.extract(
        ((fr, fr.f_lineno) for fr in reversed(frames)), lookup_lines=True
    )
    return "".join(summary.format())


@contextlib.contextmanager
def own_lines() -> Iterator[None]:
    """While active, ATen nodes traced inside a non-strict function carry its own lines."""
    mods = _modules()
    if mods is None:
        lose("own_lines", "is missing or has changed")
        yield
        return
    flat_apply_mod, fx_traceback, dispatch_mode = mods
    original = flat_apply_mod.impl

    class _OwnLines(dispatch_mode):  # type: ignore[misc, valid-type]
        def __init__(self, stop: Any) -> None:
            super().__init__()
            self.stop = stop

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            meta = fx_traceback.current_meta
            base = meta.get("stack_trace")
            own = _own_frames(self.stop) if base else ""
            if not own:
                return func(*args, **(kwargs or {}))
            meta["stack_trace"] = base.rstrip("\n") + "\n" + own
            try:
                return func(*args, **(kwargs or {}))
            finally:
                meta["stack_trace"] = base

    def impl(*args: Any, **kwargs: Any) -> Any:
        if not fx_traceback.has_preserved_node_meta() or not fx_traceback.current_meta.get("stack_trace"):
            return original(*args, **kwargs)
        with _OwnLines(sys._getframe()):
            return original(*args, **kwargs)

    flat_apply_mod.impl = impl
    try:
        yield
    finally:
        flat_apply_mod.impl = original


__all__ = ["own_lines"]
