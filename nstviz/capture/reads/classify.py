"""What a read value is: randomness, code, a plain value baked in, and the words for it."""

from __future__ import annotations

import enum
import types
from dataclasses import dataclass
from typing import Any

import torch

from nstviz.capture._introspect import unwrap_bound
from nstviz.report import NonInputRead, ReadKind

_MAX_DEPTH = 3
"""How many levels of calls into other Python functions are followed."""
_MAX_FUNCTIONS = 40
"""Stop after scanning this many functions (a guard against huge call graphs)."""

_RANDOM_MODULES = ("random", "numpy.random", "time", "secrets", "uuid", "datetime")
_MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "popitem",
        "remove",
        "clear",
        "update",
        "setdefault",
        "add",
        "discard",
        "sort",
        "reverse",
        "__setitem__",
        "__delitem__",
    }
)
_LOAD_ATTRS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_SKIP_VALUE_TYPES: tuple[type, ...] = (
    torch.dtype,
    torch.device,
    enum.Enum,
    types.ModuleType,
    type(None),
    type(Ellipsis),
    torch.layout,
    torch.memory_format,
    torch.nn.Module,
)


@dataclass
class _Ctx:
    results: dict[tuple[str, str], NonInputRead]
    scanned: set[int]
    root: str
    at_line: int | None = None


# -- classification -----------------------------------------------------------------------------


def _is_code_like(value: Any) -> bool:
    if isinstance(value, type):
        return True
    return callable(value) and not isinstance(value, torch.Tensor | torch.nn.Module)


def _user_function(value: Any) -> types.FunctionType | None:
    """The plain Python function behind ``value`` when it is user code worth following."""
    if isinstance(value, type):
        return None
    func, _ = unwrap_bound(value)
    if func is None:
        return None
    module = getattr(func, "__module__", "") or ""
    if module.split(".")[0] in ("torch", "numpy", "functools", "typing", "builtins", "transformers", "math"):
        return None
    return func


def _is_randomness(value: Any, module: types.ModuleType | None, attrs: list[str]) -> bool:
    mod_name = ""
    if module is not None:
        mod_name = ".".join([module.__name__, *attrs[:-1]]) if attrs else module.__name__
    if isinstance(value, types.ModuleType):
        return False
    owner = getattr(value, "__self__", None)
    try:
        import random as _random

        if isinstance(owner, _random.Random):
            return True
    except Exception:  # pragma: no cover
        pass
    np_owner = type(owner).__module__ if owner is not None else ""
    if np_owner.startswith("numpy.random"):
        return True
    fmod = getattr(value, "__module__", None) or mod_name
    return any(fmod == m or fmod.startswith(m + ".") for m in _RANDOM_MODULES) and callable(value)


def _is_rng_object(value: Any) -> bool:
    """A Python-level random generator instance (``random.Random``, numpy Generator/RandomState)."""
    import random as _random

    if isinstance(value, _random.Random):
        return True
    module = type(value).__module__ or ""
    return module.startswith("numpy.random")


def _add_random(ctx: _Ctx, dotted: str, line: int, via: str | None) -> None:
    _add(
        ctx,
        dotted,
        "randomness",
        line,
        via,
        f"calls `{dotted}()`: Python-level randomness and clocks run once, when nonstrict_trace traces "
        "the function, so every call of the compiled code reuses that first value (use torch's "
        "random functions on tensors instead, which are traced as ops)",
    )


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor (shape {list(value.shape)}, {str(value.dtype).removeprefix('torch.')})"
    if isinstance(value, bool):
        return f"bool ({value})"
    if isinstance(value, (int, float, complex)):
        return f"{type(value).__name__} ({value!r:.40})"
    if isinstance(value, str):
        text = repr(value)
        return f"str ({text if len(text) < 40 else text[:37] + '...'})"
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            return f"numpy array (shape {list(value.shape)})"
    except ImportError:  # pragma: no cover
        pass
    return type(value).__name__


_BACKENDS = (
    " (with aot_autograd backends: inductor, aot_eager, nstviz's record; the eager backend calls "
    "the function at run time instead)"
)
_INDUCTOR_TENSOR = (
    "; with the inductor backend, torch 2.13 fails to compile it at all ('Please convert all "
    "Tensors to FakeTensors first'): pass the tensor in as an argument instead"
)


def _baked_detail(what: str, name: str, value: Any) -> str:
    desc = _describe(value)
    if isinstance(value, torch.Tensor):
        return (
            f"reads {what} `{name}`, a {desc}: nonstrict_trace bakes this tensor in as a constant "
            f"without a guard{_BACKENDS}; in-place updates are seen, but if you rebind {name} later, "
            f"the compiled code keeps using the old tensor{_INDUCTOR_TENSOR}"
        )
    if isinstance(value, (dict, list, set, tuple)) or hasattr(value, "__dict__"):
        return (
            f"reads {what} `{name}`, {_article(desc)} {desc}: nonstrict_trace bakes what it reads from it "
            f"in as constants without a guard{_BACKENDS}: if you change an entry or rebind {name} later, "
            "the compiled code keeps the old values"
        )
    return (
        f"reads {what} `{name}`, {_article(desc)} {desc}: nonstrict_trace bakes this value in as a constant "
        f"without a guard{_BACKENDS}: if you rebind {name} later, the compiled code keeps the old value"
    )


def _article(desc: str) -> str:
    return "an" if desc[:1].lower() in "aeiou" else "a"


def _add(ctx: _Ctx, name: str, kind: ReadKind, line: int, via: str | None, detail: str) -> None:
    key = (name, kind)
    if key in ctx.results:
        return
    if via:
        detail = f"{detail} (in {via}, called from {ctx.root})"
    ctx.results[key] = NonInputRead(
        name=name, kind=kind, line=ctx.at_line if ctx.at_line is not None else line, detail=detail
    )
