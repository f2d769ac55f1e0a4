"""The one place nstviz touches torch's private API.

Everything here was measured on torch 2.13 (see ``docs/architecture.md``). Each accessor
checks that what it needs exists and raises :class:`~nstviz.errors.UnsupportedTorchError`
naming the missing piece and the torch version nstviz needs, rather than failing deep
inside a run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch

from nstviz.errors import UnsupportedTorchError

NEEDED = "torch 2.13 or 2.14"

#: Target name fragment of the opaque Dynamo node that stands for a non-strict call.
FLAT_APPLY_NAME = "flat_apply_capture"


def _fail(what: str) -> UnsupportedTorchError:
    return UnsupportedTorchError(
        f"torch {torch.__version__} lacks {what}, which nstviz needs; install {NEEDED} "
        "(e.g. pip install 'torch==2.13.0')"
    )


def torch_version() -> str:
    """The installed torch version string."""
    return str(torch.__version__)


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
    call_user_compiler_owner()


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


def restore_id_sets(contents: tuple[frozenset[int], frozenset[int]], *, remove_added: bool = False) -> None:
    """Put ids missing from both sets back, in place.

    Ids added since the snapshot are kept unless ``remove_added``: user code run under
    capture may register its own ``nonstrict_trace`` functions, and those must stay
    registered. nstviz's own marks are removed by ``marking.marked``.
    """
    for live, want in zip(id_sets(), contents, strict=True):
        current = live()
        if remove_added:
            current.difference_update(current - want)
        current.update(want - current)


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
    import torch._dynamo.decorators as decorators

    original = nonstrict_trace_fn()
    # An object, not a function: Dynamo treats a *function* that `is torch._dynamo.nonstrict_trace`
    # as the real decorator (call-site form), so a plain replacement function would still mark.
    _strict = _LiftedNonstrictTrace()

    owners = [torch._dynamo, decorators]
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

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        return fn

    def __repr__(self) -> str:
        return "<nonstrict_trace lifted by nstviz (baseline='strict')>"


def trace_logger() -> logging.Logger:
    """The structured-trace logger (``torch.__trace``, ``torch._logging._internal.trace_log``)."""
    try:
        from torch._logging._internal import trace_log
    except ImportError:  # pragma: no cover - other torch versions
        raise _fail("torch._logging._internal.trace_log") from None
    return trace_log


@functools.cache
def gb_registry() -> dict[str, dict[str, Any]]:
    """The graph-break registry shipped with torch: ``{"GB0007": {...}}`` (empty if absent)."""
    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for key, entries in data.items():
        entry = entries[0] if isinstance(entries, list) and entries else entries
        if isinstance(entry, dict):
            out[key] = entry
    return out


def current_compile_ids() -> tuple[int, int, int]:
    """``(frame_id, compile_id, attempt)`` of the compile in progress (``(-1, -1, 0)`` outside)."""
    from torch._guards import CompileContext

    trace_id = CompileContext.current_trace_id()
    if trace_id is None or trace_id.compile_id is None:
        return (-1, -1, 0)
    cid = trace_id.compile_id
    frame = cid.frame_id if cid.frame_id is not None else -1
    compile_id = cid.frame_compile_id if cid.frame_compile_id is not None else -1
    return (frame, compile_id, int(trace_id.attempt or 0))


def call_user_compiler_owner() -> type:
    """The class whose ``call_user_compiler`` hands every Dynamo graph to the backend."""
    from torch._dynamo.output_graph import OutputGraph

    if not callable(getattr(OutputGraph, "call_user_compiler", None)):
        raise _fail("torch._dynamo.output_graph.OutputGraph.call_user_compiler")
    return OutputGraph


CompilerWrap = Callable[[Callable[..., Any], str], Callable[..., Any]]


@contextlib.contextmanager
def intercept_backends(wrap: CompilerWrap) -> Iterator[None]:
    """Route every Dynamo compile through ``wrap(original_backend, co_name)`` while active.

    This catches frames compiled by any ``torch.compile`` object, including ones created
    before nstviz ran (their own ``fullgraph``/``dynamic`` settings are untouched: only
    the backend call is wrapped).
    """
    owner = call_user_compiler_owner()
    original = owner.__dict__["call_user_compiler"]
    capturing_thread = threading.get_ident()

    @functools.wraps(original)
    def call_user_compiler(self: Any, gm: Any, example_inputs: Any) -> Any:
        if threading.get_ident() != capturing_thread:  # another thread's compile: not ours to record
            return original(self, gm, example_inputs)
        saved = self.compiler_fn
        try:
            co_name = str(self.root_tx.f_code.co_name)
        except AttributeError:
            co_name = ""
        self.compiler_fn = wrap(saved, co_name)
        try:
            return original(self, gm, example_inputs)
        finally:
            self.compiler_fn = saved

    owner.call_user_compiler = call_user_compiler
    try:
        yield
    finally:
        owner.call_user_compiler = original


def aot_autograd(**kwargs: Any) -> Callable[..., Any]:
    """``torch._dynamo.backends.common.aot_autograd``."""
    from torch._dynamo.backends.common import aot_autograd as _aot

    return _aot(**kwargs)


def boxed_nop() -> Callable[..., Any]:
    """The no-op boxed compiler ``aot_eager`` uses (runs the ATen graph as is)."""
    from torch._dynamo.backends.debugging import boxed_nop as _nop

    return _nop


def compile_fx() -> Callable[..., Any]:
    """``torch._inductor.compile_fx.compile_fx`` (takes an ``inner_compile`` hook)."""
    from torch._inductor.compile_fx import compile_fx as _compile_fx

    return _compile_fx


def backend_name(backend: Any) -> str:
    """The registered name of a Dynamo backend (``"inductor"``, ``"aot_eager"``...), or ``""``."""
    if isinstance(backend, str):
        return backend
    for attr in ("_compiler_name", "compiler_name", "__name__"):
        value = getattr(backend, attr, None)
        if isinstance(value, str) and value:
            return value
    return ""


def is_inductor(backend: Any) -> bool:
    """Whether a Dynamo compiler function is inductor (the default of ``torch.compile``)."""
    seen = 0
    while seen < 8:
        seen += 1
        if getattr(backend, "_compiler_name", None) == "inductor" or getattr(backend, "compiler_name", None) == "inductor":
            return True
        inner = getattr(backend, "_torchdynamo_orig_backend", None) or getattr(backend, "compiler_fn", None)
        if inner is None or inner is backend:
            break
        backend = inner
    name = type(backend).__name__ + "." + getattr(backend, "__name__", "")
    return "Inductor" in name or "compile_fx" in name


def lookup_backend(name: str | Callable[..., Any]) -> Callable[..., Any]:
    """Resolve a backend name like ``"inductor"`` to its compiler function."""
    from torch._dynamo.backends.registry import lookup_backend as _lookup

    return _lookup(name)


def dynamo_reset() -> None:
    """``torch._dynamo.reset()``: forget compiled frames so the next call re-traces."""
    torch._dynamo.reset()


def dynamo_global_hooks() -> set[int]:
    """Ids of Dynamo's pending global-cleanup hooks (one per ``__compiled_fn_*``-style global).

    Dynamo installs each compiled frame's helpers (``__compiled_fn_*``, ``__resume_at_*``,
    ``__builtins_dict___*``...) as globals of the frame's module and registers a
    ``CleanupHook`` per global in ``CleanupManager.instance``, keyed weakly by the transformed
    code object: the hook deletes the global when that code object dies.
    """
    try:
        from torch._dynamo.utils import CleanupManager
    except ImportError:  # pragma: no cover
        return set()
    return {id(hook) for hooks in list(CleanupManager.instance.values.values()) for hook in hooks}


def drop_dynamo_globals(before: set[int]) -> int:
    """Delete the globals of the compiles since ``before`` (from :func:`dynamo_global_hooks`).

    Call only after ``torch._dynamo.reset()``: the compiled code these globals serve can no
    longer be called. Their hooks are unregistered (and ``CleanupManager.count`` kept in step)
    so that they do not raise ``KeyError`` when that code object dies later.

    Returns:
        How many globals were deleted.
    """
    try:
        from torch._dynamo.utils import CleanupHook, CleanupManager
    except ImportError:  # pragma: no cover
        return 0
    dropped = 0
    for hooks in list(CleanupManager.instance.values.values()):
        keep = []
        for hook in hooks:
            if id(hook) in before or not isinstance(hook, CleanupHook) or not isinstance(hook.scope, dict):
                keep.append(hook)
                continue
            if hook.scope.pop(hook.name, _MISSING) is not _MISSING:
                dropped += 1
            disown = getattr(CleanupHook, "disown", None)  # torch 2.14: the name's owner token
            if disown is not None:
                disown(hook.scope, hook.name)
            CleanupManager.count -= 1
        if len(keep) != len(hooks):
            hooks[:] = keep
    return dropped


_MISSING = object()


@functools.cache
def _quiet_hook_type() -> type | None:
    try:
        from torch._dynamo import utils
    except ImportError:  # pragma: no cover
        return None

    class QuietCleanupHook(utils.CleanupHook):
        """Dynamo's hook, but a global that is already gone is no error (see quiet_dynamo_cleanups)."""

        def __call__(self, *args: Any) -> None:
            if utils.CleanupManager is not None:
                utils.CleanupManager.count -= 1
            self.scope.pop(self.name, None)

    return QuietCleanupHook


def _cleanup_hook_tolerant(hook_type: type) -> bool:
    """Whether Dynamo's own hook already ignores a deleted global (torch 2.14: owner tokens, ``pop``)."""
    import dataclasses

    fields = {f.name for f in dataclasses.fields(hook_type)} if dataclasses.is_dataclass(hook_type) else set()
    return "token" in fields or hasattr(hook_type, "disown")


def quiet_dynamo_cleanups(before: set[int]) -> int:
    """Make the cleanup hooks registered since ``before`` tolerate an already deleted global.

    Dynamo's ``CleanupHook`` does ``del scope[name]`` when the compiled code dies. IPython clears
    the user namespace at exit (``InteractiveShell.reset`` from its atexit handler) before that
    code dies, so each such hook of a notebook's compile prints ``Exception ignored ...
    KeyError: '__builtins_dict___N'`` at interpreter exit, and a ``%%nstrace`` cell leaves one per
    cell. The hooks of nstviz's runs are replaced by an equal hook that deletes the global only if
    it is still there; everything else (which global, when, the manager's count) is unchanged.

    Returns:
        How many hooks were replaced.
    """
    quiet = _quiet_hook_type()
    try:
        from torch._dynamo.utils import CleanupHook, CleanupManager
    except ImportError:  # pragma: no cover
        return 0
    if quiet is None:  # pragma: no cover
        return 0
    if _cleanup_hook_tolerant(CleanupHook):
        return 0
    replaced = 0
    for hooks in list(CleanupManager.instance.values.values()):
        for i, hook in enumerate(hooks):
            if id(hook) in before or type(hook) is not CleanupHook or not isinstance(hook.scope, dict):
                continue
            hooks[i] = quiet(hook.scope, hook.name)
            replaced += 1
    return replaced

DYNAMO_GLOBAL_PREFIXES = ("__compiled_fn_", "__resume_at_", "__builtins_dict___", "__import_")
"""Names Dynamo gives the globals it installs (some, from restarted traces, get no hook)."""


def drop_new_dynamo_names(namespace: dict[str, Any], names_before: set[str]) -> int:
    """Delete the Dynamo-named globals of ``namespace`` not in ``names_before`` that no hook tracks.

    Call only after ``torch._dynamo.reset()`` and :func:`drop_dynamo_globals`: what is left are
    globals of abandoned (restarted) traces, which no code refers to.
    """
    try:
        from torch._dynamo.utils import CleanupManager
    except ImportError:  # pragma: no cover
        return 0
    tracked = {
        hook.name for hooks in list(CleanupManager.instance.values.values()) for hook in hooks
        if getattr(hook, "scope", None) is namespace
    }
    dropped = 0
    for name in [k for k in namespace if k.startswith(DYNAMO_GLOBAL_PREFIXES)]:
        if name not in names_before and name not in tracked:
            del namespace[name]
            dropped += 1
    return dropped


def graph_break_counter() -> dict[str, int]:
    """Dynamo's own graph-break counter (``torch._dynamo.utils.counters["graph_break"]``), a copy."""
    from torch._dynamo.utils import counters

    return dict(counters["graph_break"])


def graph_break_total() -> int:
    """The total of Dynamo's graph-break counter (``sum(counters["graph_break"].values())``)."""
    from torch._dynamo.utils import counters

    return sum(counters["graph_break"].values())


def dynamo_config_patch(flags: dict[str, Any]) -> Any:
    """A context manager that sets ``torch._dynamo.config`` flags for its block and puts them back."""
    import torch._dynamo.config as dynamo_config

    return dynamo_config.patch(**flags)


def dynamo_config_copy() -> dict[str, Any]:
    """A copy of ``torch._dynamo.config`` (for snapshots)."""
    return dict(torch._dynamo.config.get_config_copy())


def unsupported_types() -> tuple[type, ...]:
    """Exception types Dynamo raises for a graph break under ``fullgraph=True``."""
    from torch._dynamo import exc

    return tuple(t for t in (getattr(exc, "Unsupported", None),) if t is not None)


def leaf_callable_function(obj: Any) -> Callable[..., Any] | None:
    """The user function behind the ``<fn>_callable`` attribute of a non-strict call node."""
    fn = getattr(obj, "_fn", None)
    if fn is None:
        return None
    # Dynamo wraps the function in a local ``patched_fn`` closing over ``fn``.
    code = getattr(fn, "__code__", None)
    closure = getattr(fn, "__closure__", None) or ()
    if code is not None and "fn" in code.co_freevars:
        with contextlib.suppress(ValueError):
            fn = closure[code.co_freevars.index("fn")].cell_contents
    return fn


def post_grad_pass_hook() -> tuple[Any, str]:
    """``(torch._inductor.config, "post_grad_custom_post_pass")`` for the inductor backend."""
    import torch._inductor.config as inductor_config

    if not hasattr(inductor_config, "post_grad_custom_post_pass"):
        raise _fail("torch._inductor.config.post_grad_custom_post_pass")
    return inductor_config, "post_grad_custom_post_pass"


def is_compiled_object(obj: Any) -> bool:
    """Whether ``obj`` is already wrapped by ``torch.compile`` (function or module)."""
    from torch._dynamo.eval_frame import OptimizedModule

    return isinstance(obj, OptimizedModule) or hasattr(obj, "_torchdynamo_orig_callable")


def compile_fx_inner() -> Callable[..., Any]:
    """``torch._inductor.compile_fx.compile_fx_inner`` (inductor's per-graph compiler)."""
    from torch._inductor.compile_fx import compile_fx_inner as _inner

    return _inner


def custom_graph_pass_base() -> type | None:
    """``torch._inductor.custom_graph_pass.CustomGraphPass``, or None when this torch lacks it."""
    try:
        from torch._inductor.custom_graph_pass import CustomGraphPass
    except ImportError:
        return None
    return CustomGraphPass


def inductor_config_loaded() -> bool:
    """True when ``torch._inductor.config`` is imported already (importing it costs seconds)."""
    import sys

    return "torch._inductor.config" in sys.modules


def nonstrict_trace_holders() -> tuple[tuple[str, Any], ...]:
    """The modules whose ``nonstrict_trace`` attribute nstviz may patch: ``(key, module)`` pairs."""
    import torch._dynamo.decorators as decorators

    return (("torch._dynamo.nonstrict_trace", torch._dynamo), ("decorators.nonstrict_trace", decorators))


def load_dynamo_config(changed: dict[str, Any]) -> None:
    """Set these ``torch._dynamo.config`` values (as :func:`dynamo_config_copy` gave them)."""
    torch._dynamo.config.load_config(changed)


def is_op_overload(target: Any) -> bool:
    """True for an ATen op (``torch._ops.OpOverload`` or ``OpOverloadPacket``)."""
    return isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket))


@functools.cache
def dynamo_exception_names() -> frozenset[str]:
    """Names of torch's Dynamo exception classes: how a fatal graph break (``fullgraph=True``) surfaces."""
    from torch._dynamo import exc as dynamo_exc

    return frozenset(
        name
        for name, value in vars(dynamo_exc).items()
        if isinstance(value, type) and issubclass(value, dynamo_exc.TorchDynamoException)
    )


def fx_qualified_name(target: Any) -> str:
    """FX's qualified name of a ``call_function`` target (``torch.fx.node._get_qualified_name``)."""
    return str(torch.fx.node._get_qualified_name(target))


def compiled_original(obj: Any, *, modules: bool = True) -> Any:
    """What a ``torch.compile`` wrapper wraps, or None when ``obj`` is not such a wrapper.

    ``_orig_mod`` of a compiled module (unless ``modules=False``), the function of a compiled
    function.
    """
    original = getattr(obj, "_orig_mod", None) if modules else None
    if original is None:
        original = getattr(obj, "_torchdynamo_orig_callable", None)
    return original


def pytree_registry_state() -> tuple[Any, ...]:
    """A comparable snapshot of torch's Python pytree registry (tests check it is unchanged)."""
    from torch.utils import _pytree as pytree

    return (
        tuple(pytree.SUPPORTED_NODES.items()),
        tuple(pytree.SUPPORTED_SERIALIZED_TYPES.items()),
        tuple(pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE.items()),
        frozenset(pytree.CONSTANT_NODES),
    )


def is_pytree_node(cls: type) -> bool:
    """Whether ``cls`` is registered with torch's Python pytree."""
    from torch.utils import _pytree as pytree

    return cls in pytree.SUPPORTED_NODES


@contextlib.contextmanager
def pytree_registered(
    cls: type, flatten: Callable[..., Any] | None = None, unflatten: Callable[..., Any] | None = None
) -> Iterator[bool]:
    """Register ``cls`` with torch's Python pytree for the block; deregister it after.

    A dataclass goes through ``register_dataclass`` (when ``flatten`` is None), anything else
    through the node registration with ``flatten``/``unflatten``. Only the Python registry is
    touched (the C++ one cannot be undone); an already registered class is left alone.

    Yields:
        Whether ``cls`` was registered here.
    """
    from torch.utils import _pytree as pytree

    if not all(hasattr(pytree, n) for n in ("_deregister_pytree_node", "_private_register_pytree_node")):
        raise _fail("torch.utils._pytree._deregister_pytree_node")
    if cls in pytree.SUPPORTED_NODES:
        yield False
        return
    # registering without a serialized name overwrites the shared "no name" entry, and
    # deregistering deletes it: it is put back as it was
    names_before = dict(pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE)
    try:
        if flatten is None:
            pytree.register_dataclass(cls)  # Python registry only
        else:
            pytree._private_register_pytree_node(cls, flatten, unflatten)
        yield True
    finally:
        if cls in pytree.SUPPORTED_NODES:
            pytree._deregister_pytree_node(cls)
        table = pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE
        if list(table.items()) != list(names_before.items()):
            added = {k: v for k, v in table.items() if k not in names_before}
            table.clear()
            table.update(names_before)
            table.update(added)


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
