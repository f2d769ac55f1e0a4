"""Marking functions non-strict: ``nonstrict_trace``, the trace-rule id sets, torch 2.14's additions."""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import torch

from nstviz.capture._torch_compat.backends import trace_logger
from nstviz.capture._torch_compat.hooks import _fail


def nonstrict_trace_fn() -> Callable[..., Any]:
    """``torch._dynamo.nonstrict_trace`` (the decorator)."""
    fn = getattr(torch._dynamo, "nonstrict_trace", None)
    if fn is None:
        raise _fail("torch._dynamo.nonstrict_trace")
    return fn


def check_supported() -> None:
    """Raise :class:`UnsupportedTorchError` when anything nstviz needs is missing."""
    nonstrict_trace_fn()
    id_sets()
    trace_logger()


def id_sets() -> tuple[Any, Any]:
    """The trace-rule id sets ``(_allowed_callable_ids, _nonstrict_trace_callable_ids)``."""
    from torch._dynamo import trace_rules

    allowed = getattr(trace_rules, "_allowed_callable_ids", None)
    nonstrict = getattr(trace_rules, "_nonstrict_trace_callable_ids", None)
    if allowed is None or nonstrict is None:
        raise _fail("torch._dynamo.trace_rules._nonstrict_trace_callable_ids")
    return allowed, nonstrict


def id_set_contents() -> tuple[frozenset[int], frozenset[int]]:
    """A copy of both id sets (for snapshots)."""
    allowed, nonstrict = id_sets()
    return frozenset(allowed()), frozenset(nonstrict())


def marked_function_refs() -> dict[int, weakref.ref[Any]]:
    """Weak references to the live functions ``nonstrict_trace`` marked, by id.

    Read from the finalizers ``nonstrict_trace`` registers (``weakref.finalize``, whose callback
    removes the function's id when it is freed); {} where that registry is not there.
    """
    registry = getattr(weakref.finalize, "_registry", None)
    if not isinstance(registry, dict):
        return {}
    refs: dict[int, weakref.ref[Any]] = {}
    for info in list(registry.values()):
        func, ref = getattr(info, "func", None), getattr(info, "weakref", None)
        if not getattr(func, "__qualname__", "").endswith("nonstrict_trace.<locals>.deregister"):
            continue
        obj = ref() if callable(ref) else None
        if obj is not None:
            refs[id(obj)] = ref
    return refs


def freed_ids(refs: dict[int, weakref.ref[Any]]) -> frozenset[int]:
    """The ids among :func:`marked_function_refs`' whose function has been freed since."""
    return frozenset(i for i, ref in refs.items() if ref() is None)


def restore_id_sets(
    contents: tuple[frozenset[int], frozenset[int]], *, remove_added: bool = False, freed: frozenset[int] = frozenset()
) -> None:
    """Put ids missing from both sets back, in place, except ``freed``.

    Ids added since the snapshot are kept unless ``remove_added``: user code run under
    capture may register its own ``nonstrict_trace`` functions, and those must stay
    registered. nstviz's own marks are removed by ``marking.marked``. ``freed`` are the ids of
    functions freed since (torch removed them then): put back, they would mark whatever object
    is made later at the same address.
    """
    for live, want in zip(id_sets(), contents, strict=True):
        current = live()
        if remove_added:
            current.difference_update(current - want)
        current.update(want - current - freed)


def mark_ids(ids: set[int]) -> None:
    """Add ``ids`` to both sets: every call of those functions becomes non-strict."""
    allowed, nonstrict = id_sets()
    for i in ids:
        allowed.add(i)
        nonstrict.add(i)


def unmark_ids(ids: set[int]) -> None:
    """Remove ``ids`` from both sets."""
    allowed, nonstrict = id_sets()
    for i in ids:
        allowed.remove(i)
        nonstrict.remove(i)


def nonstrict_ids() -> frozenset[int]:
    """The current non-strict id set."""
    return frozenset(id_sets()[1]())


@contextlib.contextmanager
def nonstrict_trace_disabled() -> Iterator[None]:
    """Make ``torch._dynamo.nonstrict_trace`` a no-op wrapper (for ``baseline="strict"``)."""
    original = nonstrict_trace_fn()
    # An object, not a function: Dynamo treats a *function* that `is torch._dynamo.nonstrict_trace`
    # as the real decorator (call-site form), so a plain replacement function would still mark.
    _strict = _LiftedNonstrictTrace()

    owners = [module for _, module in nonstrict_trace_holders()]
    saved = [(o, o.__dict__.get("nonstrict_trace")) for o in owners]
    try:
        for o in owners:
            if "nonstrict_trace" in o.__dict__:
                o.nonstrict_trace = _strict
        yield
    finally:
        for o, value in saved:
            if value is not None:
                o.nonstrict_trace = value
        assert torch._dynamo.nonstrict_trace is original


class _LiftedNonstrictTrace:
    """Stands in for ``nonstrict_trace`` while marks are lifted: returns the function as is."""

    def __call__(self, traceable_fn: Callable[..., Any]) -> Callable[..., Any]:
        # torch's own parameter name: ``nonstrict_trace(traceable_fn=f)`` is lifted too
        return traceable_fn

    def __repr__(self) -> str:
        return "<nonstrict_trace lifted by nstviz (baseline='strict')>"


def nonstrict_trace_holders() -> tuple[tuple[str, Any], ...]:
    """The modules whose ``nonstrict_trace`` attribute nstviz may patch: ``(key, module)`` pairs."""
    try:
        import torch._dynamo.decorators as decorators
    except ImportError:  # another torch: only the public name
        return (("torch._dynamo.nonstrict_trace", torch._dynamo),)
    return (("torch._dynamo.nonstrict_trace", torch._dynamo), ("decorators.nonstrict_trace", decorators))


# -- torch 2.14 additions (each feature-detected, none compared by version string) -------------

LEAF_FUNCTION_NAME = "invoke_leaf_function"
"""Target name of the HOP node that stands for a call of a ``leaf_function`` (Dynamo and AOT graphs)."""


def nonstrict_trace_spelling() -> str:
    """How pasted code spells the decorator on this torch.

    ``torch.compiler.nonstrict_trace`` where this torch has the public name (2.14), else
    ``torch._dynamo.nonstrict_trace`` (2.13 has only the private one).
    """
    compiler = getattr(torch, "compiler", None)
    if callable(getattr(compiler, "nonstrict_trace", None)):
        return "torch.compiler.nonstrict_trace"
    return "torch._dynamo.nonstrict_trace"


def output_leaves(value: Any) -> list[Any]:
    """The leaves ``nonstrict_trace`` flattens a function's output into (``torch.utils._pytree``)."""
    from torch.utils import _pytree as pytree

    return pytree.tree_leaves(value)


def nonstrict_can_return(leaf: Any) -> bool:
    """Whether ``nonstrict_trace`` can return ``leaf`` (torch's ``flat_apply.is_graphable``).

    Without that check (another torch): tensors, Python numbers, strings and None.
    """
    try:
        from torch._higher_order_ops.flat_apply import is_graphable
    except ImportError:
        return isinstance(leaf, (torch.Tensor, bool, int, float, complex, str, type(None)))
    return bool(is_graphable(leaf))


@functools.cache
def nonstrict_accepts_none() -> bool:
    """Whether ``nonstrict_trace`` takes ``None`` leaves as inputs (pytorch PR #185742).

    Dynamo refuses an input leaf whose type ``flat_apply.is_graphable_type`` rejects (GB0236);
    the PR makes that check accept ``NoneType``. False on 2.13.0 and 2.14.1 (measured: an explicit
    ``None`` argument still fails with GB0236), and whenever the check cannot be found.
    """
    try:
        from torch._higher_order_ops.flat_apply import is_graphable_type
    except ImportError:
        return False
    try:
        return bool(is_graphable_type(type(None)))
    except Exception:
        return False


def leaf_function_decorator() -> Callable[..., Any] | None:
    """``torch._dynamo.decorators.leaf_function``, or None when this torch lacks it."""
    try:
        from torch._dynamo import decorators
    except ImportError:  # pragma: no cover
        return None
    fn = getattr(decorators, "leaf_function", None)
    return fn if callable(fn) else None


def leaf_user_function(obj: Any) -> Callable[..., Any] | None:
    """The user function behind the ``real_fn`` attribute of an ``invoke_leaf_function`` node.

    Dynamo wraps it twice (``make_leaf_function_wrappers``' ``wrapper`` closing over ``fn``);
    the chain of ``fn`` closure cells is followed down to the function the user decorated.
    """
    fn = getattr(obj, "_fn", None)
    for _ in range(8):
        code = getattr(fn, "__code__", None)
        closure = getattr(fn, "__closure__", None) or ()
        if code is None or "fn" not in code.co_freevars:
            break
        try:
            inner = closure[code.co_freevars.index("fn")].cell_contents
        except (ValueError, IndexError):
            break
        if inner is fn:
            break
        fn = inner
    real = getattr(fn, "_torchdynamo_leaf_real_fn", None)  # the decorated wrapper, if that is what is held
    return real if callable(real) else fn


@contextlib.contextmanager
def top_frame_wrapped(compiled: Any) -> Iterator[bool]:
    """Make ``torch.compile``'s wrapper call its function through ``wrap_inline`` while the block runs.

    What torch does when the function it is given is already marked (``@torch.compile`` over
    ``@nonstrict_trace``: ``torch/_dynamo/eval_frame.py`` wraps a function the trace rules
    skip): an extra frame Dynamo compiles, whose call of the marked function is traced
    non-strictly. nstviz marks by id after the ``def``, when the wrapper already exists, so
    the wrapper's closure cell ``fn`` is pointed at ``wrap_inline(fn)`` for the run and put
    back after. Yields whether it could (False: the hook is lost, the mark stays as it is).
    """
    original = getattr(compiled, "_torchdynamo_orig_callable", None)
    code = getattr(compiled, "__code__", None)
    cells = getattr(compiled, "__closure__", None) or ()
    names = code.co_freevars if code is not None else ()
    cell = next((c for n, c in zip(names, cells, strict=False) if n == "fn"), None)
    try:
        from torch._dynamo.external_utils import wrap_inline
    except ImportError:  # another torch
        wrap_inline = None
    if original is None or cell is None or wrap_inline is None or cell.cell_contents is not original:
        from nstviz.capture._torch_compat.hooks import lose

        if original is not None and wrap_inline is None:
            lose("top_frame", "is missing")
        elif original is not None:
            lose("top_frame", "has changed (no closure cell 'fn' holding the compiled function)")
        yield False
        return
    cell.cell_contents = wrap_inline(original)
    try:
        yield True
    finally:
        cell.cell_contents = original


def wrapped_if_marked(fn: Any) -> Any:
    """``fn``, or ``wrap_inline(fn)`` when it is marked now: what ``torch.compile(fn)`` compiles.

    torch wraps a function its trace rules mark when ``torch.compile`` is given it (see
    :func:`top_frame_wrapped`), but decides once per code object; a compile nstviz makes itself
    while the function is marked (the timed runs) says so explicitly.
    """
    if id(fn) not in nonstrict_ids():
        return fn
    try:
        from torch._dynamo.external_utils import wrap_inline
    except ImportError:  # another torch: the mark alone
        return fn
    return wrap_inline(fn)

