"""Collect torch's structured trace (what ``TORCH_TRACE`` writes) in-process, per run.

A :class:`TraceCollector` is a :class:`logging.Handler` added to the ``torch.__trace``
logger for the duration of one run. It keeps only the events nstviz uses (compile starts
and their stacks, graph-break artifacts, guards, compilation metrics) as small
:class:`TraceEvent` values; graph payloads are not kept (the recorder has the real graphs).

Each ``dynamo_error`` artifact is logged by Dynamo inside the ``except`` block of the failed
compile: the collector keeps the live exception being handled (:attr:`TraceCollector.compile_errors`),
so a ``fullgraph=True`` failure that the user's code catches is still seen as the exception it
was (stack, hints, cause), exactly as when it is not caught.

Each graph-break artifact also records the total of Dynamo's graph-break counter when it
arrived (``metadata["counter"]``): Dynamo logs the artifact, then counts the graph break (or
not), so the counter's increase up to the next artifact is what that artifact caused
(:func:`nstviz.tracing.breaks.caused_per_event`).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from nstviz.capture import _torch_compat
from nstviz.tracing.events import METRIC_KEYS, TraceEvent

# Artifact names whose payload is kept.
_KEEP_ARTIFACTS = frozenset({"dynamo_graph_break_reason", "dynamo_error", "recompile_reasons"})
# Top-level event kinds kept (with payload when marked True).
_KEEP_EVENTS = {
    "dynamo_start": False,
    "compilation_metrics": False,
    "dynamo_cpp_guards_str": True,
    "dynamo_guards": True,
    "recompile_reasons": True,
}
_INTERNED: dict[int, str] = {}
"""File names torch interned (``{"str": [name, id]}`` records), kept for every later run's stacks."""


class TraceCollector(logging.Handler):
    """A handler on ``torch.__trace`` that collects :class:`TraceEvent` values."""

    def __init__(self, counter: Callable[[], int] | None = None) -> None:
        super().__init__(level=logging.DEBUG)
        self.events: list[TraceEvent] = []
        self._counter = counter
        self.counter_start = counter() if counter is not None else None
        """Dynamo's graph-break counter total when collecting started."""
        self._strings = _INTERNED  # torch interns each file name once per process, not once per run
        self._thread = threading.get_ident()  # only the capturing thread's compiles are ours
        self.compile_errors: list[tuple[tuple[int | None, int | None, int], BaseException]] = []
        """``((frame, compile, attempt), exception)`` of each failed compile, in order (see the module docstring)."""
        self.failures = 0
        """Records that could not be read (nstviz's fault; the compile went on)."""
        self.first_failure: str | None = None

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102
        if record.thread != self._thread and "str" not in (getattr(record, "metadata", None) or {}):
            return  # (interned file names are shared by all threads: always kept)
        try:
            self._handle(record)
        except Exception as exc:  # never let nstviz break the user's compile; say it in a note
            self.failures += 1
            if self.first_failure is None:
                self.first_failure = repr(exc)[:300]

    def failure_note(self, run: str) -> str | None:
        """The Report note for records that could not be read in ``run``, or None."""
        if not self.failures:
            return None
        return (
            f"{run}: could not read torch's structured trace ({self.first_failure}); graph breaks, "
            "compiles and guards of this run may be missing"
        )

    def _handle(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "metadata", None)
        if not isinstance(meta, dict):
            return
        if "str" in meta:  # interned file names used by dynamo_start stacks
            value = meta["str"]
            if isinstance(value, (list, tuple)) and len(value) == 2:
                self._strings[int(value[1])] = str(value[0])
            return
        kind, keep_payload, data = None, False, None
        if "artifact" in meta:
            name = meta["artifact"].get("name", "")
            if name in _KEEP_ARTIFACTS:
                kind, keep_payload, data = name, True, {}
                if name == "dynamo_graph_break_reason" and self._counter is not None:
                    data = {"counter": self._counter()}
                elif name == "dynamo_error":
                    live = sys.exc_info()[1]  # Dynamo logs this artifact while handling the error
                    if live is not None:
                        ids = (meta.get("frame_id"), meta.get("frame_compile_id"), int(meta.get("attempt") or 0))
                        self.compile_errors.append((ids, live))
        else:
            for key, with_payload in _KEEP_EVENTS.items():
                if key in meta:
                    kind, keep_payload, data = key, with_payload, meta[key]
                    break
        if kind is None:
            return
        if kind == "dynamo_start":
            data = {"stack": [self._frame(f) for f in (data or {}).get("stack", [])]}
        elif kind == "compilation_metrics":
            data = {k: data.get(k) for k in METRIC_KEYS if isinstance(data, dict)}
        payload = getattr(record, "payload", None) if keep_payload else None
        self.events.append(
            TraceEvent(
                kind=kind,
                frame_id=meta.get("frame_id"),
                compile_id=meta.get("frame_compile_id"),
                attempt=int(meta.get("attempt") or 0),
                metadata=data if isinstance(data, dict) else {},
                payload=payload if isinstance(payload, str) else None,
                compiled_autograd_id=meta.get("compiled_autograd_id"),
            )
        )

    def _frame(self, frame: dict[str, Any]) -> dict[str, Any]:
        filename = frame.get("filename")
        if isinstance(filename, int):
            if filename not in self._strings:  # interned while nobody listened (a compile outside a capture)
                self._strings.update(_torch_compat.interned_strings())
            filename = self._strings.get(filename)
        return {"file": filename, "line": frame.get("line"), "function": frame.get("name"), "code": frame.get("loc")}

    @staticmethod
    def reads_record(name: str, metadata: Callable[[], Any]) -> bool:
        """Whether anything of torch's record ``name`` is kept (see ``_handle``); ``metadata()`` only for artifacts."""
        if name == "artifact":
            meta = metadata()
            return isinstance(meta, dict) and meta.get("name") in _KEEP_ARTIFACTS
        return name == "str" or name in _KEEP_EVENTS

    @staticmethod
    def reads_payload(name: str, metadata: Any) -> bool:
        """Whether the payload of torch's record ``name`` (with ``metadata``) is kept (see ``_handle``)."""
        if name == "artifact":
            return isinstance(metadata, dict) and metadata.get("name") in _KEEP_ARTIFACTS
        return _KEEP_EVENTS.get(name, False)

    def of_kind(self, kind: str) -> list[TraceEvent]:
        """Events of one kind, in the order torch emitted them."""
        return [e for e in self.events if e.kind == kind]


@contextlib.contextmanager
def collecting() -> Iterator[TraceCollector]:
    """Install a :class:`TraceCollector` on ``torch.__trace``; restore the logger exactly after.

    The collector snapshots Dynamo's graph-break counter at the start and at each graph-break
    artifact (see the module docstring). While it is torch's only listener, torch computes the
    records and payloads it keeps only, and AOTAutograd prints no graph
    (:func:`nstviz.capture._torch_compat.trace_payloads.payloads_read_only`).
    """
    logger = _torch_compat.trace_logger()
    saved_level, saved_propagate, saved_disabled = logger.level, logger.propagate, logger.disabled
    collector = TraceCollector(_torch_compat.graph_break_total)
    logger.addHandler(collector)
    if logger.level > logging.DEBUG or logger.level == logging.NOTSET:
        logger.setLevel(logging.DEBUG)
    try:
        # records and payloads the collector drops (graph printouts, metadata dumps) are not even computed
        with _torch_compat.payloads_read_only(collector, collector.reads_payload, records=collector.reads_record):
            yield collector
    finally:
        logger.removeHandler(collector)
        logger.setLevel(saved_level)
        logger.propagate = saved_propagate
        logger.disabled = saved_disabled
