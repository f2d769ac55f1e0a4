"""The structured-trace event nstviz keeps (live from ``torch.__trace``, or read from a log).

Torch-free: :mod:`nstviz.capture.trace_log` collects these in-process, :mod:`nstviz.offline`
builds them from a TORCH_TRACE file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nstviz.report.compile_id import CompileId

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

    compiled_autograd_id: int | None = None

    @property
    def cid(self) -> CompileId | None:
        """The compile that logged it (None for events outside a compile)."""
        if self.frame_id is None and self.compiled_autograd_id is None:
            return None
        return CompileId(
            frame_id=self.frame_id, frame_compile_id=self.compile_id, attempt=self.attempt,
            compiled_autograd_id=self.compiled_autograd_id,
        )


__all__ = ["METRIC_KEYS", "TraceEvent"]
