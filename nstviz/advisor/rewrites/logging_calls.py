"""Remedy: a logging call Dynamo cannot run (GB0291), or a ``warnings.warn`` (GB0007), is skipped under ``torch.compile``.

``logger.warning_once("`num_delay_tokens` was not provided ...")`` in a forward, or in a config
property the forward reads (transformers' ``torch_dtype`` deprecation, the ``loss_type=None``
notice), breaks the graph: Dynamo does not trace ``logging.Logger`` methods. torch's own switch,
``torch._dynamo.config.ignore_logger_methods``, makes the methods it holds no-ops while tracing:
the graph goes on, and compiled code does not log that message (eager code still does). The
remedy adds the method at the break (``logging.Logger.warning_once``: every logger's) to it. The
switch takes module-level functions too: ``warnings.warn(DEPRECATION_WARNING, FutureWarning)`` in
a forward, a C function Dynamo skips (GB0007, "Attempted to call function marked as skipped"),
goes in as ``warnings.warn``. It is kept like any rewrite: only when the graphs go down and the
outputs equal eager's.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from nstviz.advisor.rewrites._core import BreakSite, Proposal, Rewrite, resolve
from nstviz.advisor.rewrites._source import FunctionSource, RewriteError, function_source, raw_function
from nstviz.capture._torch_compat.dynamo import dynamo_config_patch, dynamo_config_value

__all__ = ["LOGGER_METHODS", "LoggerNoop", "is_logging_break", "is_skipped_call_break", "propose_logger_noop"]

_FLAG = "ignore_logger_methods"
_CONTEXT = re.compile(r"method: .*?\.(\w+), args")
LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
                             "warning_once", "info_once", "warning_advice"})
"""The ``logging.Logger`` methods a log call is written with (transformers adds the ``_once`` ones)."""


def is_logging_break(brk: BreakSite) -> bool:
    """A break on a ``logging.Logger`` method call (GB0291)."""
    return brk.gb_id == "GB0291" or "logging.Logger method" in brk.message


def is_skipped_call_break(brk: BreakSite) -> bool:
    """A break on a call of a function Dynamo skips (GB0007): a ``warnings.warn`` among others."""
    return brk.gb_id == "GB0007" or "marked as skipped" in brk.message


_WARNING_FUNCTIONS = (warnings.warn, warnings.warn_explicit)


def _calls_at(brk: BreakSite, src: FunctionSource) -> Iterator[ast.Call]:
    """The calls spanning the break's line (every call when the line is unknown)."""
    line = src.local_line(brk.line)
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Call) and (line is None or node.lineno <= line <= (node.end_lineno or node.lineno)):
            yield node


def _warning_calls(brk: BreakSite, src: FunctionSource) -> list[Any]:
    """The ``warnings`` functions called on the break's line (``warnings.warn(...)``, ``warn(...)``)."""
    called = [resolve(node.func, src) for node in _calls_at(brk, src)]
    return [f for f in _WARNING_FUNCTIONS if any(obj is f for obj in called)]


@dataclass
class LoggerNoop(Rewrite):
    """``logging.Logger.<method>`` ignored by Dynamo while the block runs (added to the flag's set)."""

    methods: tuple[Any, ...] = ()

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """Run the block with the methods in ``ignore_logger_methods``; the flag is put back after."""
        with dynamo_config_patch({_FLAG: {*dynamo_config_value(_FLAG), *self.methods}}):
            yield


def _method_names(brk: BreakSite, src: FunctionSource | None) -> list[str]:
    """The logging method at the break: from Dynamo's context (``<Logger x>.warning_once``), else the break's line."""
    names = [m for m in _CONTEXT.findall(brk.message) if callable(getattr(logging.Logger, m, None))]
    if names or src is None:
        return list(dict.fromkeys(names))
    for node in _calls_at(brk, src):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in LOGGER_METHODS and callable(getattr(logging.Logger, f.attr, None)):
            names.append(f.attr)
    return list(dict.fromkeys(names))


def propose_logger_noop(fn: object, brk: BreakSite | None = None) -> Proposal:
    """The logging methods at ``brk`` added to ``torch._dynamo.config.ignore_logger_methods``."""
    out = Proposal()
    brk = brk or BreakSite()
    if not is_logging_break(brk) and not is_skipped_call_break(brk):
        out.fits = False
        return out
    try:
        src: FunctionSource | None = function_source(fn)
    except RewriteError:
        src = None
    if not is_logging_break(brk):
        return _propose_warning_noop(fn, brk, src, out)
    names = _method_names(brk, src)
    if not names:
        out.notes.append("the logging method at the break could not be read")
        return out
    methods = tuple(getattr(logging.Logger, n) for n in names)
    raw = raw_function(fn)
    calls = ", ".join(f"`{n}`" for n in names)
    where = f"{raw.__qualname__}" + (f" (line {brk.line})" if brk.line else "")
    why = (f"the logging call {calls} in {where} broke the graph (GB0291): Dynamo does not trace logging.Logger "
           "methods; torch.compile skips them (compiled code does not log these messages; eager code still does)")
    listed = ", ".join(f"logging.Logger.{n}" for n in names)
    source = (f"import logging\n\n# nstviz: {why}\n"
              f"torch._dynamo.config.{_FLAG} = {{*torch._dynamo.config.{_FLAG}, {listed}}}\n")
    out.rewrites.append(LoggerNoop(
        remedy="logger-noop", description=f"{raw.__qualname__}: {listed} ignored under torch.compile", source=source,
        original=raw, function=raw, methods=methods,
    ))
    return out


def _propose_warning_noop(fn: object, brk: BreakSite, src: FunctionSource | None, out: Proposal) -> Proposal:
    """``warnings.warn`` at a skipped-call break (GB0007) added to ``torch._dynamo.config.ignore_logger_methods``."""
    functions = _warning_calls(brk, src) if src is not None else []
    if not functions:
        out.fits = False  # another skipped C call: the custom-op remedies answer it
        return out
    raw = raw_function(fn)
    listed = ", ".join(f"warnings.{f.__name__}" for f in functions)
    where = f"{raw.__qualname__}" + (f" (line {brk.line})" if brk.line else "")
    why = (f"the `{listed}` call in {where} broke the graph (GB0007): Dynamo skips it; torch.compile skips it "
           "(compiled code does not warn; eager code still does)")
    source = (f"import warnings\n\n# nstviz: {why}\n"
              f"torch._dynamo.config.{_FLAG} = {{*torch._dynamo.config.{_FLAG}, {listed}}}\n")
    out.rewrites.append(LoggerNoop(
        remedy="logger-noop", description=f"{raw.__qualname__}: {listed} ignored under torch.compile", source=source,
        original=raw, function=raw, methods=tuple(functions),
    ))
    return out
