"""Structured-trace records and payloads nobody reads are left uncomputed while nstviz alone listens.

``torch._logging.trace_structured`` computes every record's payload (a graph's
``print_readable``, a ``pformat`` of AOTAutograd's metadata, each fake tensor's description)
as soon as ``torch.__trace`` has a handler, whoever the handler is and whatever it keeps.
nstviz's collector (:mod:`nstviz.capture.trace_log`) keeps a few kinds of records only
(graph breaks, errors, guards, recompile reasons, compile starts and metrics) and the payloads
of fewer still; the rest were computed, hashed and thrown away on every compile (about 1 s of
CPU per compare() of a 48-block model, growing with graph size). While
:func:`payloads_read_only` is active, the modules of torch that call ``trace_structured`` call
a wrapper that drops a record the listener does not read before anything of it is computed
(``records``), and passes ``payload_fn`` through only when the listener reads the payload
(``reads``). AOTAutograd also prints its joint, forward and backward graphs before it logs
them (``print_readable`` of graphs of thousands of nodes, whether or not a payload is wanted):
it is not asked to while none of those records is read, its own loggers are off and no
AOTAutograd cache entry needs the text. When any other handler listens (a ``TORCH_TRACE``
file, a user's handler) nothing is dropped: they get every record and payload and every
record's ``pathname`` exactly as without nstviz (a handler added during the capture gets every
payload too, its records naming this module as their caller). torch's own ``LazyTraceHandler``
without a trace directory listens to nothing (it removes itself at the first record). The
metadata is computed once, as before. A torch without these functions where nstviz looks
leaves everything as is: the capture is only slower, nothing is lost, so this is no hook of
``HOOKS``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

PayloadRead = Callable[[str, Any], bool]
"""``(record name, its metadata) -> whether the listener reads the payload``."""
RecordRead = Callable[[str, Callable[[], Any]], bool]
"""``(record name, its metadata on demand) -> whether the listener reads the record at all``."""

_AOT_PRINTOUTS = ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph")
"""The records AOTAutograd's printed graphs go to."""


def _no_payload() -> None:
    return None


def _others_listen(handlers: list[logging.Handler], listener: logging.Handler) -> bool:
    """Whether a handler other than ``listener`` reads the records (an idle LazyTraceHandler does not)."""
    return any(
        h is not listener
        and not (type(h).__name__ == "LazyTraceHandler" and getattr(h, "root_dir", None) is None)
        for h in handlers
    )


class _Once:
    """``metadata_fn`` called at most once, however often the result is asked for."""

    __slots__ = ("_done", "_fn", "_value")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn, self._done, self._value = fn, False, None

    def __call__(self) -> Any:
        if not self._done:
            self._value, self._done = self._fn(), True
        return self._value


def _torch_modules_binding(original: Callable[..., Any]) -> list[Any]:
    """The loaded torch modules whose global ``trace_structured`` is ``original``."""
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "torch" or name.startswith("torch.")):
            continue
        # the module's own dict: a module __getattr__ (lazy imports, deprecation warnings) is never run
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict) and namespace.get("trace_structured") is original:
            found.append(module)
    return found


def _every_record(name: str, metadata: Callable[[], Any]) -> bool:
    return True


@contextlib.contextmanager
def payloads_read_only(
    listener: logging.Handler, reads: PayloadRead, *, records: RecordRead = _every_record
) -> Iterator[None]:
    """While the block runs, compute a trace record or payload only if the listener reads it, or others listen.

    Args:
        listener: the handler on ``torch.__trace`` whose reads decide (nstviz's collector).
        reads: whether ``listener`` reads the payload of a record (its name and metadata).
        records: whether ``listener`` reads a record at all (its name, and its metadata when
            asked for); a record it does not read is not logged (default: every record is).
    """
    try:
        from torch._logging import _internal
    except ImportError:
        yield
        return
    original = getattr(_internal, "trace_structured", None)
    trace_log = getattr(_internal, "trace_log", None)
    if (
        not callable(original)
        or not isinstance(trace_log, logging.Logger)
        or _others_listen(trace_log.handlers, listener)
    ):
        yield
        return

    def alone() -> bool:
        handlers = trace_log.handlers
        return listener in handlers and not _others_listen(handlers, listener)

    def trace_structured(name: str, metadata_fn: Callable[[], Any] = dict, **kwargs: Any) -> None:
        if not alone():
            original(name, metadata_fn, **kwargs)
            return
        metadata = _Once(metadata_fn)
        if not records(name, metadata):
            return
        if not reads(name, metadata()):
            kwargs["payload_fn"] = _no_payload
        original(name, metadata, **kwargs)

    def printouts_unread() -> bool:
        return alone() and not any(records(name, dict) for name in _AOT_PRINTOUTS)

    with contextlib.suppress(ImportError):  # loaded now, so that its binding is replaced too
        import torch._functorch._aot_autograd.graph_compile  # noqa: F401
    modules = _torch_modules_binding(original)
    for module in modules:
        module.trace_structured = trace_structured
    try:
        with _aot_printouts_skipped(printouts_unread):
            yield
    finally:
        for module in modules:
            if module.__dict__.get("trace_structured") is trace_structured:
                module.trace_structured = original


@contextlib.contextmanager
def _aot_printouts_skipped(unread: Callable[[], bool]) -> Iterator[None]:
    """AOTAutograd's graph printouts skipped while ``unread()`` and nothing else wants them.

    ``_log_joint_graph`` and ``_log_fw_bw_graphs`` print the graphs for AOTAutograd's loggers,
    for the structured trace and for an AOTAutograd cache entry; they return the text (None
    when ``enable_log`` is off, which torch handles). Their other records (the functorch
    config, the forward metadata) go only to the same loggers and trace.
    """
    try:
        from torch._functorch._aot_autograd import graph_compile
    except ImportError:
        yield
        return
    joint = graph_compile.__dict__.get("_log_joint_graph")
    fw_bw = graph_compile.__dict__.get("_log_fw_bw_graphs")
    loggers = [graph_compile.__dict__.get(n) for n in ("aot_joint_log", "aot_graphs_log")]
    if not callable(joint) or not callable(fw_bw) or not all(isinstance(lg, logging.Logger) for lg in loggers):
        yield
        return

    def skip(aot_config: Any) -> bool:
        return (
            getattr(aot_config, "cache_info", True) is None
            and not any(lg.isEnabledFor(logging.INFO) for lg in loggers)  # type: ignore[union-attr]
            and unread()
        )

    def log_joint_graph(fx_g: Any, aot_config: Any, *args: Any, **kwargs: Any) -> Any:
        return None if skip(aot_config) else joint(fx_g, aot_config, *args, **kwargs)

    def log_fw_bw_graphs(fw: Any, bw: Any, subclass_meta: Any, fw_metadata: Any, aot_config: Any, *args: Any,
                         **kwargs: Any) -> Any:
        if skip(aot_config):
            return None, None
        return fw_bw(fw, bw, subclass_meta, fw_metadata, aot_config, *args, **kwargs)

    graph_compile._log_joint_graph = log_joint_graph
    graph_compile._log_fw_bw_graphs = log_fw_bw_graphs
    try:
        yield
    finally:
        if graph_compile.__dict__.get("_log_joint_graph") is log_joint_graph:
            graph_compile._log_joint_graph = joint
        if graph_compile.__dict__.get("_log_fw_bw_graphs") is log_fw_bw_graphs:
            graph_compile._log_fw_bw_graphs = fw_bw


__all__ = ["PayloadRead", "RecordRead", "payloads_read_only"]
