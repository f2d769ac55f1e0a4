"""Adapters that let a function called with ``None`` arguments be traced non-strictly.

torch 2.13 and 2.14.1 refuse ``None`` as an input of a ``nonstrict_trace``-ed function (GB0236,
"Invalid input type ... (it got NoneType)"); a torch with pytorch PR #185742 takes ``None``
leaves, and there no adapter is offered (:func:`nstviz.capture._torch_compat.nonstrict_accepts_none`
is False on 2.13.0 and 2.14.1: measured). An adapter is a function made outside the
compiled region that takes the call's arguments, drops the ``None`` ones, and calls a
non-strict inner function with the rest, plus where the ``None`` s were as dict keys (an
empty-valued dict has no pytree leaves: the positions live in the tree structure). The inner
function puts the ``None`` s back and calls the original.

The attempt and the recommended code run the same source (:func:`adapter_source`): the attempt
executes it with an identity decorator and marks the inner function by id (undone after the
run, like every mark); the recommendation pastes it with nonstrict_trace as the user's torch
spells it (``torch.compiler.nonstrict_trace`` on 2.14, ``torch._dynamo.nonstrict_trace`` on 2.13).
:func:`installed` rebinds the function where it is looked up (class attribute, module
globals) and always restores exactly what was there.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nstviz.capture import _torch_compat

__all__ = ["Adapter", "adapter_source", "installed", "make_adapter", "prefix_for"]

_MISSING = object()


def prefix_for(qualname: str) -> str:
    """The Python name prefix of an adapter's functions (``VitsEncoder.forward`` -> ``_VitsEncoder_forward``)."""
    return "_" + re.sub(r"\W", "_", qualname.replace("<locals>", "locals"))


def adapter_source(prefix: str, decorator: str = "torch._dynamo.nonstrict_trace") -> str:
    """The adapter's code: ``{prefix}_nonstrict`` (traced non-strictly) and ``{prefix}_adapter``.

    ``{prefix}`` must name the original function when the code runs.
    """
    return f'''\
@{decorator}
def {prefix}_nonstrict(args, kwargs, none_args, none_kwargs):
    args = list(args)
    for i in none_args:  # positions of the None arguments, in ascending order
        args.insert(i, None)
    return {prefix}(*args, **kwargs, **dict.fromkeys(none_kwargs))


@functools.wraps({prefix})
def {prefix}_adapter(*args, **kwargs):
    # nonstrict_trace refuses None inputs (GB0236): pass the rest, and where the Nones were
    # as dict keys (no pytree leaves)
    return {prefix}_nonstrict(
        tuple(a for a in args if a is not None),
        {{k: v for k, v in kwargs.items() if v is not None}},
        {{i: () for i, a in enumerate(args) if a is None}},
        {{k: () for k, v in kwargs.items() if v is None}},
    )
'''


@dataclass
class Adapter:
    """An adapter for one function, and the places where it is installed during a run."""

    qualname: str
    original: Any
    """The plain function that is adapted."""
    adapter: Any
    """What replaces it where it is looked up (``staticmethod`` -wrapped for a static method)."""
    inner: Any
    """The function to mark non-strict."""
    places: list[tuple[Any, str]] = field(default_factory=list)
    """``(class or globals dict, name)`` pairs the adapter is installed at."""


def make_adapter(function: Any, qualname: str, caller_globals: Iterable[dict[str, Any]] = ()) -> Adapter | None:
    """An adapter for ``function`` (a plain function or method), or None when it cannot be placed.

    Args:
        function: the function as resolved (methods through their class, or a module function).
        qualname: its qualified name inside its module (``Class.method`` or ``fn``).
        caller_globals: globals of the modules that call it (module functions are looked up
            there too).
    """
    raw = function
    for _ in range(8):
        if isinstance(raw, (staticmethod, classmethod)) or isinstance(raw, types.MethodType):
            raw = raw.__func__
        else:
            break
    if not isinstance(raw, types.FunctionType):
        return None
    places: list[tuple[Any, str]] = []
    module = sys.modules.get(raw.__module__ or "")
    parts = qualname.split(".")
    static_method = False
    if len(parts) > 1:
        owner: Any = module
        for part in parts[:-1]:
            owner = getattr(owner, part, None) if owner is not None else None
        if not isinstance(owner, type):
            return None
        static = inspect.getattr_static(owner, parts[-1], _MISSING)
        if isinstance(static, classmethod):
            return None
        static_method = isinstance(static, staticmethod)
        current = static.__func__ if static_method else static
        if not isinstance(current, types.FunctionType) or (current is not raw and inspect.unwrap(current) is not raw):
            return None
        places.append((owner, parts[-1]))
    else:
        current = function
        seen: set[int] = set()
        for d in [raw.__globals__, *caller_globals]:
            if id(d) in seen or d.get(raw.__name__) is not function:
                continue
            seen.add(id(d))
            places.append((d, raw.__name__))
        if not places:
            return None
    adapter, inner = _build(current, qualname, raw.__module__)
    if static_method:
        adapter = staticmethod(adapter)
    return Adapter(qualname=qualname, original=raw, adapter=adapter, inner=inner, places=places)


def _build(current: Any, qualname: str, module: str | None) -> tuple[Any, Any]:
    """``(adapter, inner)`` around ``current``: the code the recommendation pastes, run here.

    With an identity decorator: the inner function is marked by id for the run (and unmarked
    after), not for good.
    """
    prefix = prefix_for(qualname)
    ns: dict[str, Any] = {"functools": functools, prefix: current, "_identity": lambda f: f}
    exec(compile(adapter_source(prefix, "_identity"), f"<nstviz adapter for {qualname}>", "exec"), ns)
    adapter, inner = ns[prefix + "_adapter"], ns[prefix + "_nonstrict"]
    inner.__qualname__ = f"{qualname}.<nonstrict adapter>"
    inner.__module__ = module
    return adapter, inner


def _same_def(value: Any, original: Any) -> bool:
    """``value`` is a new function object from the same ``def`` as ``original`` (the code ran it again)."""
    if not isinstance(value, types.FunctionType) or value is original:
        return False
    a, b = value.__code__, original.__code__
    return (a.co_filename, a.co_firstlineno, value.__qualname__) == (b.co_filename, b.co_firstlineno, original.__qualname__)


@contextlib.contextmanager
def installed(adapters: Iterable[Adapter]) -> Iterator[Callable[[], list[Any]]]:
    """Install the adapters while the block runs; restore every place exactly, also on errors.

    Yields ``readapt()``: code run again (a cell, each run of ``trace_code``) re-runs the
    ``def`` of a function it defines and rebinds its name over the adapter; ``readapt()`` puts
    an adapter around each such new definition (same file, line and qualname) where a module
    function's adapter was installed, and returns every inner function installed so far by
    it (to mark non-strict).
    """
    ads = list(adapters)
    saved: list[tuple[Any, str, Any]] = []
    inners: list[Any] = []

    def readapt() -> list[Any]:
        for a in ads:
            for place, name in a.places:
                if isinstance(place, dict) and _same_def(place.get(name), a.original):
                    adapter, inner = _build(place[name], a.qualname, a.original.__module__)
                    place[name] = adapter
                    inners.append(inner)
        return list(inners)

    try:
        for a in ads:
            for place, name in a.places:
                if isinstance(place, dict):
                    saved.append((place, name, place.get(name, _MISSING)))
                    place[name] = a.adapter
                else:
                    saved.append((place, name, place.__dict__.get(name, _MISSING)))
                    setattr(place, name, a.adapter)
        yield readapt
    finally:
        for place, name, old in reversed(saved):
            if isinstance(place, dict):
                if old is _MISSING:
                    place.pop(name, None)
                else:
                    place[name] = old
            elif old is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(place, name)
            else:
                setattr(place, name, old)


# -- pytree registration of a user class ------------------------------------------------------


def pytree_source(prefix: str, cls_expr: str) -> str:
    """Flatten/unflatten functions (``{prefix}_flatten``, ``{prefix}_unflatten``) over an object's attributes.

    Attributes that are None go into the context (nonstrict_trace refuses None leaves), the
    others are the leaves, like ``torch.utils._pytree.register_dataclass`` does for fields.
    """
    return f'''\
def {prefix}_flatten(obj):
    names = [k for k, v in vars(obj).items() if v is not None]
    nones = tuple(k for k, v in vars(obj).items() if v is None)
    return [getattr(obj, k) for k in names], (tuple(names), nones)


def {prefix}_unflatten(values, context):
    names, nones = context
    obj = {cls_expr}.__new__({cls_expr})
    vars(obj).update(zip(names, values))
    vars(obj).update(dict.fromkeys(nones))
    return obj
'''


@dataclass
class PytreeType:
    """A user class to register with ``torch.utils._pytree`` for an attempt."""

    cls: type
    flatten: Any = None
    """For a class that is not a dataclass: the flatten function (None: ``register_dataclass``)."""
    unflatten: Any = None

    @property
    def name(self) -> str:
        """``module.Class``."""
        return f"{self.cls.__module__}.{self.cls.__qualname__}"


def pytree_type(cls: type) -> PytreeType:
    """How ``cls`` is registered: as a dataclass, or with flatten/unflatten over its attributes."""
    import dataclasses

    if dataclasses.is_dataclass(cls):
        return PytreeType(cls)
    prefix = prefix_for(cls.__qualname__)
    ns: dict[str, Any] = {"_cls": cls}
    exec(compile(pytree_source(prefix, "_cls"), f"<nstviz pytree for {cls.__qualname__}>", "exec"), ns)
    return PytreeType(cls, ns[prefix + "_flatten"], ns[prefix + "_unflatten"])


@contextlib.contextmanager
def registered(
    types_: Iterable[PytreeType], namespace: dict[str, Any] | None = None
) -> Iterator[Callable[[], None]]:
    """Register the classes with pytree while the block runs; deregister them after, also on errors.

    Yields ``refresh()``: it registers, for the rest of the block, every class in ``namespace``
    that is a new definition of one of the classes (same module and qualname). Code run again
    (a cell, each run of ``trace_code``) defines its classes anew: the class an attempt saw
    refused is not the one the next run creates.
    """
    kinds = list(types_)
    wanted = {(t.cls.__module__, t.cls.__qualname__) for t in kinds}
    with contextlib.ExitStack() as stack:
        done: list[type] = []  # kept alive while registered, so ids are not reused

        def register(t: PytreeType) -> None:
            stack.enter_context(_torch_compat.pytree_registered(t.cls, t.flatten, t.unflatten))
            done.append(t.cls)

        for t in kinds:
            register(t)

        def refresh() -> None:
            if namespace is None or not wanted:
                return
            for value in list(namespace.values()):
                if (
                    isinstance(value, type)
                    and (value.__module__, value.__qualname__) in wanted
                    and all(value is not c for c in done)
                ):
                    register(pytree_type(value))

        yield refresh
