"""The one place nstviz touches torch's private API.

Everything here was measured on the torch versions in :data:`TESTED_TORCH` (see
``docs/architecture.md``). Each hook feature-detects what it needs (the degradation rule,
``docs/reliability.md``):

- an **essential** hook (:data:`HOOKS`, ``essential=True``: ``nonstrict_trace``, the trace-rule
  id sets, the structured trace logger) raises :class:`~nstviz.errors.UnsupportedTorchError`
  naming the missing piece and the torch versions nstviz is tested with, before anything runs;
- a **degradable** hook that finds its API missing or changed calls :func:`lose`: the capture
  goes on without that feature, and the Report's notes say which feature was lost and why
  (:func:`noting_lost_features` collects them for a capture). It never raises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch

from nstviz.errors import UnsupportedTorchError

TESTED_TORCH: tuple[str, ...] = ("2.13", "2.14")
"""The torch releases (major.minor) the suite runs on: the single source of that list."""

NEEDED = "torch " + " or ".join(TESTED_TORCH)

#: Target name fragment of the opaque Dynamo node that stands for a non-strict call.
FLAT_APPLY_NAME = "flat_apply_capture"


def _fail(what: str) -> UnsupportedTorchError:
    return UnsupportedTorchError(
        f"torch {torch.__version__} lacks {what}, which nstviz needs; install {NEEDED} "
        f"(e.g. pip install 'torch=={TESTED_TORCH[0]}.0')"
    )


def torch_version() -> str:
    """The installed torch version string."""
    return str(torch.__version__)


def _release(version: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def untested_torch_note() -> str | None:
    """One line saying the installed torch is not one nstviz is tested with, or None when it is."""
    version = torch_version()
    have = _release(version)
    tested = [r for r in (_release(t) for t in TESTED_TORCH) if r is not None]
    if have is not None and have in tested:
        return None
    if have is not None and have > max(tested):
        how = "is newer than"
    elif have is not None and have < min(tested):
        how = "is older than"
    else:
        how = "is not one of"
    return (
        f"torch {version} {how} the versions nstviz is tested with ({', '.join(TESTED_TORCH)}): "
        "untested; a Report's notes name any torch feature nstviz could not use there"
    )


# -- the hooks and the degradation rule ----------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Hook:
    """One place nstviz depends on torch's private API."""

    key: str
    api: str
    """What it reads from torch (dotted path)."""
    feature: str
    """What nstviz gives with it."""
    essential: bool
    without: str = ""
    """What the capture does without it (degradable hooks)."""


HOOKS: dict[str, Hook] = {
    h.key: h
    for h in (
        Hook("nonstrict_trace", "torch._dynamo.nonstrict_trace", "tracing functions non-strictly", True),
        Hook(
            "id_sets",
            "torch._dynamo.trace_rules._allowed_callable_ids / _nonstrict_trace_callable_ids",
            "marking functions by name (and unmarking them after)",
            True,
        ),
        Hook("trace_logger", "torch._logging._internal.trace_log", "graph breaks and compiles (the structured trace)", True),
        Hook(
            "backend",
            "torch._dynamo.output_graph.OutputGraph.call_user_compiler",
            "recording graphs (Dynamo and ATen) and the non-strict regions in them",
            False,
            "each torch.compile ran with its own backend; breaks and compiles come from the trace log",
        ),
        Hook(
            "compile_ids",
            "torch._guards.CompileContext.current_trace_id",
            "matching graphs to their compiles",
            False,
            "graphs carry the compile id -1/-1",
        ),
        Hook(
            "aot_record",
            "torch._dynamo.backends.common.aot_autograd / torch._dynamo.backends.debugging.boxed_nop",
            "recording ATen graphs (backend 'record')",
            False,
            "the Dynamo graphs ran as traced, without AOTAutograd",
        ),
        Hook(
            "inductor",
            "torch._inductor.compile_fx.compile_fx / compile_fx_inner / config.post_grad_custom_post_pass",
            "recording inductor's ATen and post-grad graphs",
            False,
            "inductor compiled as usual, unrecorded",
        ),
        Hook(
            "dynamo_globals",
            "torch._dynamo.utils.CleanupManager / CleanupHook",
            "deleting the helper globals (__compiled_fn_*...) of earlier runs, and quiet exit",
            False,
            "those globals stay in the namespace until Dynamo's own cleanup",
        ),
        Hook(
            "break_counter",
            'torch._dynamo.utils.counters["graph_break"]',
            "Dynamo's own graph-break count",
            False,
            "the graph breaks each break caused are read from its message",
        ),
        Hook(
            "gb_registry",
            "torch/_dynamo/graph_break_registry.json",
            "the explanations and hints of torch's graph-break registry",
            False,
            "breaks show Dynamo's message only",
        ),
        Hook(
            "fatal_break",
            "torch._dynamo.exc.Unsupported",
            "recognising a graph break that stops a fullgraph=True compile",
            False,
            "it is shown as the run's error only",
        ),
        Hook(
            "fx_names",
            "torch.fx.node._get_qualified_name",
            "qualified names of graph node targets",
            False,
            "nodes show the target's plain name",
        ),
        Hook(
            "pytree",
            "torch.utils._pytree._private_register_pytree_node / _deregister_pytree_node",
            "the advisor's pytree-registration remedy",
            False,
            "the attempt ran without registering the class",
        ),
    )
}

_collectors: list[dict[str, str]] = []
_collectors_lock = threading.Lock()
_log = logging.getLogger("nstviz")


def lost_note(key: str, why: str) -> str:
    """The Report note for degradable hook ``key`` whose API is unusable (``why``)."""
    hook = HOOKS[key]
    return f"torch {torch_version()}: {hook.api} {why}, so nstviz goes without {hook.feature}; {hook.without}"


def lose(key: str, why: str) -> None:
    """A degradable hook found its torch API missing or changed: note it for every capture running."""
    note = lost_note(key, why)
    with _collectors_lock:
        for lost in _collectors:
            lost.setdefault(key, note)
    _log.debug("%s", note)


@contextlib.contextmanager
def noting_lost_features() -> Iterator[dict[str, str]]:
    """Collect the notes of the features lost while the block runs (``{hook key: note}``)."""
    lost: dict[str, str] = {}
    with _collectors_lock:
        _collectors.append(lost)
    try:
        yield lost
    finally:
        with _collectors_lock:
            _collectors.remove(lost)


def capture_notes(lost: dict[str, str]) -> list[str]:
    """The notes a Report of this torch starts with: untested version, then the lost features."""
    untested = untested_torch_note()
    return ([untested] if untested else []) + list(lost.values())


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


def trace_logger() -> logging.Logger:
    """The structured-trace logger (``torch.__trace``, ``torch._logging._internal.trace_log``)."""
    try:
        from torch._logging._internal import trace_log
    except ImportError:
        raise _fail("torch._logging._internal.trace_log") from None
    if not isinstance(trace_log, logging.Logger):
        raise _fail("torch._logging._internal.trace_log (a logging.Logger)")
    return trace_log


def gb_registry() -> dict[str, dict[str, Any]]:
    """The graph-break registry shipped with torch: ``{"GB0007": {...}}`` (empty, and noted, if absent)."""
    from nstviz.tracing.breaks import read_gb_registry  # torch-free: offline reads use it too

    registry, why = read_gb_registry(os.path.dirname(str(getattr(torch._dynamo, "__file__", "") or "")))
    if why:
        lose("gb_registry", why)
    return registry


def current_compile_ids() -> tuple[int, int, int]:
    """``(frame_id, compile_id, attempt)`` of the compile in progress (``(-1, -1, 0)`` outside)."""
    try:
        from torch._guards import CompileContext

        trace_id = CompileContext.current_trace_id()
        if trace_id is None or trace_id.compile_id is None:
            return (-1, -1, 0)
        cid = trace_id.compile_id
        frame = cid.frame_id if cid.frame_id is not None else -1
        compile_id = cid.frame_compile_id if cid.frame_compile_id is not None else -1
        return (int(frame), int(compile_id), int(trace_id.attempt or 0))
    except ImportError:
        lose("compile_ids", "is missing")
    except Exception as exc:
        lose("compile_ids", f"has changed ({type(exc).__name__}: {exc})"[:200])
    return (-1, -1, 0)


def call_user_compiler_owner() -> type | None:
    """The class whose ``call_user_compiler`` hands every Dynamo graph to the backend.

    None (and the ``backend`` feature lost) when it is missing or its signature is not
    ``(self, gm, example_inputs)``.
    """
    try:
        from torch._dynamo.output_graph import OutputGraph
    except ImportError:
        lose("backend", "is missing")
        return None
    method = OutputGraph.__dict__.get("call_user_compiler")
    if not callable(method):
        lose("backend", "is missing")
        return None
    try:
        params = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):
        params = []
    if len(params) != 3 or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        lose("backend", f"has a new signature {_signature(method)}, nstviz knows (self, gm, example_inputs)")
        return None
    return OutputGraph


def _signature(fn: Any) -> str:
    """``(a, b, *, c)``: the parameters' names only."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return "(?)"
    return "(" + ", ".join(str(p.replace(annotation=p.empty, default=p.empty)) for p in params) + ")"


CompilerWrap = Callable[[Callable[..., Any], str], Callable[..., Any]]


@contextlib.contextmanager
def intercept_backends(wrap: CompilerWrap) -> Iterator[None]:
    """Route every Dynamo compile through ``wrap(original_backend, co_name)`` while active.

    This catches frames compiled by any ``torch.compile`` object, including ones created
    before nstviz ran (their own ``fullgraph``/``dynamic`` settings are untouched: only
    the backend call is wrapped).
    """
    owner = call_user_compiler_owner()
    if owner is None:  # the feature is lost (noted): compiles go on unrecorded
        yield
        return
    original = owner.__dict__["call_user_compiler"]
    capturing_thread = threading.get_ident()

    @functools.wraps(original)
    def call_user_compiler(self: Any, gm: Any, example_inputs: Any) -> Any:
        if threading.get_ident() != capturing_thread:  # another thread's compile: not ours to record
            return original(self, gm, example_inputs)
        if not hasattr(self, "compiler_fn"):
            lose("backend", "has changed (OutputGraph has no compiler_fn)")
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


AtenWrap = Callable[[str, Callable[..., Any]], Callable[..., Any]]


def aot_record_backend(wrap: AtenWrap) -> Callable[..., Any] | None:
    """``aot_autograd`` with ``wrap(level, boxed_nop)`` as its forward/backward/inference compilers.

    None (the ``aot_record`` feature lost) when this torch lacks either or takes other arguments.
    """
    try:
        from torch._dynamo.backends.common import aot_autograd as _aot
        from torch._dynamo.backends.debugging import boxed_nop as _nop
    except ImportError:
        lose("aot_record", "is missing")
        return None
    try:
        return _aot(
            fw_compiler=wrap("aten_forward", _nop),
            bw_compiler=wrap("aten_backward", _nop),
            inference_compiler=wrap("aten_inference", _nop),
            keep_inference_input_mutations=True,
        )
    except TypeError as exc:
        lose("aot_record", f"has a new signature ({exc})"[:200])
        return None


def inductor_compilers() -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    """``(compile_fx, compile_fx_inner)`` when ``compile_fx`` takes ``inner_compile``, else None (noted)."""
    try:
        from torch._inductor.compile_fx import compile_fx as _compile_fx
        from torch._inductor.compile_fx import compile_fx_inner as _inner
    except ImportError:
        lose("inductor", "is missing")
        return None
    try:
        takes_inner = "inner_compile" in inspect.signature(_compile_fx).parameters
    except (TypeError, ValueError):
        takes_inner = False
    if not takes_inner:
        lose("inductor", f"has a new signature {_signature(_compile_fx)} without inner_compile")
        return None
    return _compile_fx, _inner


def post_grad_hook_slot() -> tuple[Any, str] | None:
    """Like :func:`post_grad_pass_hook`, but None (the ``inductor`` feature lost) when absent."""
    try:
        return post_grad_pass_hook()
    except (ImportError, UnsupportedTorchError):
        lose("inductor", "is missing (post_grad_custom_post_pass)")
        return None


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


def post_grad_pass_hook() -> tuple[Any, str]:
    """``(torch._inductor.config, "post_grad_custom_post_pass")`` for the inductor backend."""
    import torch._inductor.config as inductor_config

    if not hasattr(inductor_config, "post_grad_custom_post_pass"):
        raise _fail("torch._inductor.config.post_grad_custom_post_pass")
    return inductor_config, "post_grad_custom_post_pass"


def is_compiled_object(obj: Any) -> bool:
    """Whether ``obj`` is already wrapped by ``torch.compile`` (function or module)."""
    try:
        from torch._dynamo.eval_frame import OptimizedModule
    except ImportError:  # another torch: what every compiled module carries
        return hasattr(obj, "_orig_mod") or hasattr(obj, "_torchdynamo_orig_callable")
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
    try:
        import torch._dynamo.decorators as decorators
    except ImportError:  # another torch: only the public name
        return (("torch._dynamo.nonstrict_trace", torch._dynamo),)
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
