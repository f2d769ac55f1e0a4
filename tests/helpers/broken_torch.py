"""Break one torch API as nstviz sees it, the way a newer torch might: gone, renamed or changed.

A newer torch changes an API and its own callers together. Deleting the attribute for
everyone would break torch itself (Dynamo calls ``OutputGraph.call_user_compiler``, its
logging calls ``CompileContext.current_trace_id``), which no release does. So
:func:`broken_for_nstviz` changes what code in the ``nstviz`` package reads from the module
(``from torch.x import name``, ``torch.x.name``, ``getattr(torch.x, "name")``) while torch's
own code keeps reading the real attribute. The module's class is put back after.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from typing import Any

MISSING: Any = object()
"""The attribute is gone (``AttributeError``; ``from ... import`` raises ``ImportError``)."""


def _from_nstviz(depth: int) -> bool:
    name = sys._getframe(depth).f_globals.get("__name__", "")
    return name == "nstviz" or name.startswith("nstviz.")


@contextlib.contextmanager
def broken_for_nstviz(module_name: str, attr: str, replacement: Any = MISSING) -> Iterator[types.ModuleType]:
    """Within the block, nstviz reads ``module_name.attr`` as ``replacement`` (or finds it gone)."""
    module = importlib.import_module(module_name)
    assert hasattr(module, attr), f"{module_name}.{attr} does not exist: the test breaks nothing"
    original_class = type(module)

    class Broken(original_class):  # type: ignore[misc, valid-type]
        def __getattribute__(self, name: str) -> Any:
            if name == attr and _from_nstviz(2):
                if replacement is MISSING:
                    raise AttributeError(f"module {module_name!r} has no attribute {attr!r}")
                return replacement
            return super().__getattribute__(name)

    module.__class__ = Broken
    try:
        yield module
    finally:
        module.__class__ = original_class
