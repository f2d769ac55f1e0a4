"""Dynamo's state and values: reset, its globals and cleanups, counters, config, FX names, pytree."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import torch

from nstviz.capture._torch_compat.hooks import lose


def dynamo_reset() -> None:
    """``torch._dynamo.reset()``: forget compiled frames so the next call re-traces."""
    torch._dynamo.reset()


def dynamo_explain(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch._dynamo.explain(fn)``: call the result with the arguments for its graph count and breaks."""
    return torch._dynamo.explain(fn)


def _cleanup_types() -> tuple[Any, type] | None:
    """``(CleanupManager, CleanupHook)`` of ``torch._dynamo.utils``, or None (``dynamo_globals`` lost)."""
    try:
        from torch._dynamo.utils import CleanupHook, CleanupManager
    except ImportError:
        lose("dynamo_globals", "is missing")
        return None
    if not isinstance(CleanupHook, type) or not isinstance(getattr(getattr(CleanupManager, "instance", None), "values", None), dict):
        lose("dynamo_globals", "has changed (no CleanupManager.instance.values dict)")
        return None
    return CleanupManager, CleanupHook


def _pending_hooks(manager: Any) -> list[list[Any]]:
    return [hooks for hooks in list(manager.instance.values.values()) if isinstance(hooks, list)]


def dynamo_global_hooks() -> set[int]:
    """Ids of Dynamo's pending global-cleanup hooks (one per ``__compiled_fn_*``-style global).

    Dynamo installs each compiled frame's helpers (``__compiled_fn_*``, ``__resume_at_*``,
    ``__builtins_dict___*``...) as globals of the frame's module and registers a
    ``CleanupHook`` per global in ``CleanupManager.instance``, keyed weakly by the transformed
    code object: the hook deletes the global when that code object dies.
    """
    types = _cleanup_types()
    if types is None:
        return set()
    return {id(hook) for hooks in _pending_hooks(types[0]) for hook in hooks}


def drop_dynamo_globals(before: set[int] | None) -> int:
    """Delete the globals of the compiles since ``before`` (from :func:`dynamo_global_hooks`).

    Call only after ``torch._dynamo.reset()``: the compiled code these globals serve can no
    longer be called. Their hooks are unregistered (and ``CleanupManager.count`` kept in step)
    so that they do not raise ``KeyError`` when that code object dies later.

    Returns:
        How many globals were deleted.
    """
    types = _cleanup_types()
    if types is None or before is None:
        return 0
    manager, hook_type = types
    dropped = 0
    for hooks in _pending_hooks(manager):
        keep = []
        for hook in hooks:
            scope, name = getattr(hook, "scope", None), getattr(hook, "name", None)
            if id(hook) in before or not isinstance(hook, hook_type) or not isinstance(scope, dict):
                keep.append(hook)
                continue
            if scope.pop(name, _MISSING) is not _MISSING:
                dropped += 1
            disown = getattr(hook_type, "disown", None)  # torch 2.14: the name's owner token
            if disown is not None:
                disown(scope, name)
            if isinstance(getattr(manager, "count", None), int):
                manager.count -= 1
        if len(keep) != len(hooks):
            hooks[:] = keep
    return dropped


_MISSING = object()


@functools.cache
def _quiet_hook_type(hook_type: type) -> type:
    import sys

    utils = sys.modules[hook_type.__module__]  # not imported in __call__: it may run at interpreter exit

    class QuietCleanupHook(hook_type):  # type: ignore[misc, valid-type]
        """Dynamo's hook, but a global that is already gone is no error (see quiet_dynamo_cleanups)."""

        def __call__(self, *args: Any) -> None:
            if getattr(utils, "CleanupManager", None) is not None:
                utils.CleanupManager.count -= 1
            self.scope.pop(self.name, None)

    return QuietCleanupHook


def _cleanup_hook_tolerant(hook_type: type) -> bool:
    """Whether Dynamo's own hook already ignores a deleted global (torch 2.14: owner tokens, ``pop``)."""
    fields = {f.name for f in dataclasses.fields(hook_type)} if dataclasses.is_dataclass(hook_type) else set()
    return "token" in fields or hasattr(hook_type, "disown")


def _takes_scope_name(hook_type: type) -> bool:
    """Whether ``hook_type(scope, name)`` is how this torch builds a hook (torch 2.13)."""
    try:
        inspect.signature(hook_type).bind({}, "name")
    except (TypeError, ValueError):
        return False
    return True


def quiet_dynamo_cleanups(before: set[int]) -> int:
    """Make the cleanup hooks registered since ``before`` tolerate an already deleted global.

    Dynamo's ``CleanupHook`` does ``del scope[name]`` when the compiled code dies. IPython clears
    the user namespace at exit (``InteractiveShell.reset`` from its atexit handler) before that
    code dies, so each such hook of a notebook's compile prints ``Exception ignored ...
    KeyError: '__builtins_dict___N'`` at interpreter exit, and a ``%%nstrace`` cell leaves one per
    cell. The hooks of nstviz's runs are replaced by an equal hook that deletes the global only if
    it is still there; everything else (which global, when, the manager's count) is unchanged.
    A torch whose hook already tolerates it (2.14), or builds hooks otherwise, is left alone.

    Returns:
        How many hooks were replaced.
    """
    types = _cleanup_types()
    if types is None:
        return 0
    manager, hook_type = types
    if _cleanup_hook_tolerant(hook_type) or not _takes_scope_name(hook_type):
        return 0
    quiet = _quiet_hook_type(hook_type)
    replaced = 0
    for hooks in _pending_hooks(manager):
        for i, hook in enumerate(hooks):
            if id(hook) in before or type(hook) is not hook_type or not isinstance(getattr(hook, "scope", None), dict):
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
    types = _cleanup_types()
    if types is None:
        return 0
    tracked = {
        getattr(hook, "name", None)
        for hooks in _pending_hooks(types[0])
        for hook in hooks
        if getattr(hook, "scope", None) is namespace
    }
    dropped = 0
    for name in [k for k in namespace if k.startswith(DYNAMO_GLOBAL_PREFIXES)]:
        if name not in names_before and name not in tracked:
            del namespace[name]
            dropped += 1
    return dropped


def _graph_break_counts() -> dict[str, int] | None:
    try:
        from torch._dynamo.utils import counters

        counts = {str(k): int(v) for k, v in counters["graph_break"].items()}
    except ImportError:
        lose("break_counter", "is missing")
        return None
    except Exception as exc:
        lose("break_counter", f"has changed ({type(exc).__name__}: {exc})"[:200])
        return None
    return counts


def graph_break_counter() -> dict[str, int]:
    """Dynamo's own graph-break counter (``torch._dynamo.utils.counters["graph_break"]``), a copy.

    Empty when this torch has no such counter (see :func:`graph_break_count`).
    """
    return _graph_break_counts() or {}


def graph_break_count() -> int | None:
    """The total of Dynamo's graph-break counter, or None when this torch has none (noted)."""
    counts = _graph_break_counts()
    return None if counts is None else sum(counts.values())


def graph_break_total() -> int:
    """The total of Dynamo's graph-break counter (``sum(counters["graph_break"].values())``), 0 if none."""
    return graph_break_count() or 0


def dynamo_config_patch(flags: dict[str, Any]) -> Any:
    """A context manager that sets ``torch._dynamo.config`` flags for its block and puts them back."""
    import torch._dynamo.config as dynamo_config

    return dynamo_config.patch(**flags)


def dynamo_config_value(name: str) -> Any:
    """The current value of one ``torch._dynamo.config`` flag (aliases resolved)."""
    import torch._dynamo.config as dynamo_config

    return getattr(dynamo_config, name)


def dynamo_config_copy() -> dict[str, Any]:
    """A copy of ``torch._dynamo.config`` (for snapshots)."""
    return dict(torch._dynamo.config.get_config_copy())


def unsupported_types() -> tuple[type, ...]:
    """Exception types Dynamo raises for a graph break under ``fullgraph=True`` (empty, and noted, if none)."""
    from torch._dynamo import exc

    found = getattr(exc, "Unsupported", None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        lose("fatal_break", "is missing")
        return ()
    return (found,)


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


def is_compiled_object(obj: Any) -> bool:
    """Whether ``obj`` is already wrapped by ``torch.compile`` (function or module)."""
    try:
        from torch._dynamo.eval_frame import OptimizedModule
    except ImportError:  # another torch: what every compiled module carries
        return hasattr(obj, "_orig_mod") or hasattr(obj, "_torchdynamo_orig_callable")
    return isinstance(obj, OptimizedModule) or hasattr(obj, "_torchdynamo_orig_callable")


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

    base = getattr(dynamo_exc, "TorchDynamoException", None)
    if not isinstance(base, type):  # another torch: every exception class of torch._dynamo.exc
        base = BaseException
    return frozenset(
        name for name, value in vars(dynamo_exc).items() if isinstance(value, type) and issubclass(value, base)
    )


def fx_qualified_name(target: Any) -> str:
    """FX's qualified name of a ``call_function`` target (``torch.fx.node._get_qualified_name``).

    The target's plain name (and the ``fx_names`` feature noted lost) when this torch lacks it.
    """
    qualify = getattr(torch.fx.node, "_get_qualified_name", None)
    if not callable(qualify):
        lose("fx_names", "is missing")
        return str(getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or target)
    return str(qualify(target))


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

    if not all(
        hasattr(pytree, n)
        for n in ("_deregister_pytree_node", "_private_register_pytree_node", "register_dataclass", "SUPPORTED_NODES")
    ):
        lose("pytree", "is missing")
        yield False
        return
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


def compilation_metrics() -> list[Any]:
    """Dynamo's compilation metrics so far (one entry per frame compile), or [] where torch has none."""
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:  # pragma: no cover
        return []
    try:
        return list(get_compilation_metrics())
    except Exception:  # pragma: no cover - a torch that changed it
        return []


@contextlib.contextmanager
def compilation_metrics_room(size: int = 100_000) -> Iterator[None]:
    """Let Dynamo's compilation-metrics buffer (a deque of 64) hold ``size`` entries, then shrink it back."""
    try:
        import torch._dynamo.utils as dynamo_utils
    except ImportError:  # pragma: no cover
        yield
        return
    buffer = getattr(dynamo_utils, "_compilation_metrics", None)
    setter = getattr(dynamo_utils, "set_compilation_metrics_limit", None)
    old = getattr(buffer, "maxlen", None)
    if not callable(setter) or old is None or old >= size:
        yield
        return
    setter(size)
    try:
        yield
    finally:
        setter(old)


def compile_wrapper_code() -> Any:
    """The code object of the function ``torch.compile`` wraps every call in, or None."""
    from torch._dynamo import eval_frame

    found = getattr(compile_wrapper_code, "cached", None)
    if found is not None:
        return found
    probe = torch.compile(lambda: None, backend="eager")
    code = getattr(probe, "__code__", None)
    if code is None or code.co_filename != eval_frame.__file__ or not {"fn", "self"} <= set(code.co_freevars):
        return None
    compile_wrapper_code.cached = code  # type: ignore[attr-defined]
    return code


def import_inductor() -> None:
    """Import inductor's compiler now (its first import costs seconds, once per process)."""
    import torch._inductor.compile_fx  # noqa: F401




def drop_custom_op(op: Any, name: str) -> None:
    """Remove a ``torch.library.custom_op`` nstviz defined (its registrations and its definition ``name``)."""
    lib = getattr(op, "_lib", None)
    if lib is not None:
        lib._destroy()
    try:
        from torch._library import custom_ops
    except ImportError:  # a torch without the registry: nothing kept there
        return
    getattr(custom_ops, "OPDEFS", {}).pop(name, None)
    namespace, _, short = name.partition("::")  # the packet torch.ops cached on first use of the name
    vars(getattr(torch.ops, namespace)).pop(short, None)
