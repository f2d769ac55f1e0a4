"""Structured-trace payloads nobody reads are left uncomputed while nstviz alone listens.

``torch._logging.trace_structured`` computes every record's payload (a graph's
``print_readable``, a ``pformat`` of AOTAutograd's metadata, each fake tensor's description)
as soon as ``torch.__trace`` has a handler, whoever the handler is and whatever it keeps.
nstviz's collector (:mod:`nstviz.capture.trace_log`) keeps the payloads of a few kinds only
(graph breaks, errors, guards, recompile reasons); the rest were computed, hashed and thrown
away on every compile (about 1 s of CPU per compare() of a 48-block model, growing with
graph size). While :func:`payloads_read_only` is active, the modules of torch that call
``trace_structured`` call a wrapper that passes ``payload_fn`` through only when the record
is one the listener reads. When any other handler listens (a ``TORCH_TRACE`` file, a user's
handler) nothing is patched: they get every payload and every record's ``pathname`` exactly as
without nstviz (a handler added during the capture gets every payload too, its records naming
this module as their caller). torch's own ``LazyTraceHandler`` without a trace directory
listens to nothing (it removes itself at the first record). The metadata is computed once, as
before. A torch without ``trace_structured`` where nstviz looks leaves everything as is: the
capture is only slower, nothing is lost, so this is no hook of ``HOOKS``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

PayloadRead = Callable[[str, Any], bool]
"""``(record name, its metadata) -> whether the listener reads the payload``."""


def _no_payload() -> None:
    return None


def _others_listen(handlers: list[logging.Handler], listener: logging.Handler) -> bool:
    """Whether a handler other than ``listener`` reads the records (an idle LazyTraceHandler does not)."""
    return any(
        h is not listener
        and not (type(h).__name__ == "LazyTraceHandler" and getattr(h, "root_dir", None) is None)
        for h in handlers
    )


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


@contextlib.contextmanager
def payloads_read_only(listener: logging.Handler, reads: PayloadRead) -> Iterator[None]:
    """While the block runs, compute a trace payload only if ``reads(name, metadata)`` or others listen.

    Args:
        listener: the handler on ``torch.__trace`` whose reads decide (nstviz's collector).
        reads: whether ``listener`` reads the payload of a record (its name and metadata).
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

    def trace_structured(name: str, metadata_fn: Callable[[], Any] = dict, **kwargs: Any) -> None:
        handlers = trace_log.handlers
        if listener not in handlers or _others_listen(handlers, listener):
            original(name, metadata_fn, **kwargs)
            return
        metadata = metadata_fn()
        if not reads(name, metadata):
            kwargs["payload_fn"] = _no_payload
        original(name, lambda: metadata, **kwargs)

    modules = _torch_modules_binding(original)
    for module in modules:
        module.trace_structured = trace_structured
    try:
        yield
    finally:
        for module in modules:
            if module.__dict__.get("trace_structured") is trace_structured:
                module.trace_structured = original


__all__ = ["PayloadRead", "payloads_read_only"]
