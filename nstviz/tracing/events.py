"""The structured-trace event nstviz keeps (live from ``torch.__trace``, or read from a log).

Torch-free: :mod:`nstviz.capture.trace_log` collects these in-process, :mod:`nstviz.offline`
builds them from a TORCH_TRACE file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

METRIC_KEYS = (
    "compile_id",
    "co_name",
    "co_filename",
    "co_firstlineno",
    "entire_frame_compile_time_s",
    "backend_compile_time_s",
    "fail_type",
    "fail_reason",
    "fail_user_frame_filename",
    "fail_user_frame_lineno",
    "recompile_reason",
    "restart_reasons",
    "num_graph_breaks",
    "graph_op_count",
    "guard_count",
    "cache_size",
)
"""The ``compilation_metrics`` fields kept."""


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One structured-trace event: its kind, tlparse ids, metadata and (maybe) payload."""

    kind: str
    frame_id: int | None
    compile_id: int | None
    attempt: int
    metadata: dict[str, Any] = field(default_factory=dict)
    payload: str | None = None

    @property
    def tlparse_id(self) -> str:
        """``"frame/compile"`` or ``"frame/compile_attempt"`` as tlparse writes it."""
        base = f"{self.frame_id}/{self.compile_id}"
        return f"{base}_{self.attempt}" if self.attempt else base


__all__ = ["METRIC_KEYS", "TraceEvent"]
