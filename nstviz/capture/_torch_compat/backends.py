"""The compile pipeline: the trace logger, compile ids, the backend call, AOTAutograd and inductor."""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch

from nstviz.capture._torch_compat.hooks import _fail, lose
from nstviz.errors import UnsupportedTorchError


def trace_logger() -> logging.Logger:
    """The structured-trace logger (``torch.__trace``, ``torch._logging._internal.trace_log``)."""
    try:
        from torch._logging._internal import trace_log
    except ImportError:
        raise _fail("torch._logging._internal.trace_log") from None
    if not isinstance(trace_log, logging.Logger):
        raise _fail("torch._logging._internal.trace_log (a logging.Logger)")
    return trace_log


def interned_strings() -> dict[int, str]:
    """The structured-trace string table torch keeps (``torch._logging.structured.INTERN_TABLE``), by id; {} without it.

    A string is interned once per process, announced by a ``str`` record only if someone
    listened then (a compile outside a capture interns file names unheard).
    """
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:
        return {}
    if not isinstance(INTERN_TABLE, dict):
        return {}
    return {i: s for s, i in list(INTERN_TABLE.items()) if isinstance(i, int) and isinstance(s, str)}


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


def post_grad_pass_hook() -> tuple[Any, str]:
    """``(torch._inductor.config, "post_grad_custom_post_pass")`` for the inductor backend."""
    import torch._inductor.config as inductor_config

    if not hasattr(inductor_config, "post_grad_custom_post_pass"):
        raise _fail("torch._inductor.config.post_grad_custom_post_pass")
    return inductor_config, "post_grad_custom_post_pass"


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
