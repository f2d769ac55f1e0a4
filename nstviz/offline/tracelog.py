r"""Streaming reader of TORCH_TRACE logs (what ``TORCH_TRACE=DIR`` writes, one file per rank).

A log is a sequence of records. Each record is one glog-style line whose tail is a JSON
object, followed by its payload, when ``has_payload`` is set, as tab-indented lines::

    V1201 03:56:43.423000 6376 torch/_dynamo/output_graph.py:2841] {"dynamo_output_graph": {...}, "frame_id": 4, ...}
    \tclass GraphModule(torch.nn.Module):
    \t    def forward(self, ...):

:class:`TraceLogReader` yields one :class:`Entry` per record, in file order, holding the
payload lines only for the kinds its caller asks for (so memory is bounded by the largest
payload kept, not by the file). Bad input never crashes it: a line that is neither a record
nor a payload, or a record whose JSON does not decode, is *skipped*; a record of a kind
tlparse does not know is *unknown* (still yielded); a last record cut off by the end of the
file is *truncated* (dropped). :class:`LogStats` counts each. A file that is not a
TORCH_TRACE log at all raises :class:`~nstviz.errors.ForeignLogError`, one that cannot be
decoded :class:`~nstviz.errors.CorruptLogError`, and one with no complete record
:class:`~nstviz.errors.TruncatedLogError`. Gzipped logs (``.gz``) are read transparently.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from nstviz.errors import CorruptLogError, ForeignLogError, TruncatedLogError

# Keys of a record that are ids, not its kind.
_ID_KEYS = frozenset({"frame_id", "frame_compile_id", "attempt", "has_payload", "rank", "compiled_autograd_id"})

KNOWN_KINDS = frozenset(
    {
        "str",
        "artifact",
        "chromium_event",
        "dynamo_start",
        "dynamo_output_graph",
        "dynamo_guards",
        "dynamo_cpp_guards_str",
        "dynamo_error",
        "optimize_ddp_split_graph",
        "optimize_ddp_split_child",
        "compiled_autograd_graph",
        "aot_joint_graph",
        "aot_forward_graph",
        "aot_backward_graph",
        "aot_inference_graph",
        "inductor_pre_grad_graph",
        "inductor_post_grad_graph",
        "inductor_output_code",
        "compilation_metrics",
        "bwd_compilation_metrics",
        "aot_autograd_backward_compilation_metrics",
        "compilation_metrics_runtime",
        "recompile_reasons",
        "describe_storage",
        "describe_tensor",
        "describe_source",
        "graph_dump",
        "link",
        "dump_file",
        "symbolic_shape_specialization",
        "propagate_real_tensors",
        "guard_added",
        "guard_added_fast",
        "create_unbacked_symbol",
        "expression_created",
        "missing_fake_kernel",
        "mismatched_fake_kernel",
        "exported_program",
        "stack",
    }
)
"""Record kinds tlparse knows (``src/types.rs``'s ``Envelope``); others count as unknown."""

# A record line: glog prefix (level letter + date), then "] " and a JSON object.
_GLOG_RE = re.compile(r"^(?:\[rank\d+\]:)?[VIWEF]\d{4} ")
_SNIFF_LINES = 50


@dataclass(slots=True)
class Entry:
    """One record of the log.

    ``kind`` is the record's key (``"dynamo_output_graph"``), or for ``artifact`` records
    ``"artifact:<name>"``; ``metadata`` is the value under that key. ``payload`` holds the
    payload lines (without their leading tab) when the reader was asked to keep them.
    """

    kind: str
    metadata: Any
    frame_id: int | None
    compile_id: int | None
    attempt: int
    rank: int | None
    line: int
    has_payload: bool = False
    payload: list[str] | None = None
    site: str = ""
    """The torch file that logged the record, from its glog prefix (``site-packages/torch/_dynamo/utils.py``)."""

    @property
    def text(self) -> str:
        """The payload as one string (empty when not kept)."""
        return "\n".join(self.payload) if self.payload else ""


@dataclass(slots=True)
class LogStats:
    """What a read saw: records, and the entries skipped, unknown or truncated."""

    records: int = 0
    skipped: int = 0
    """Lines that were neither a record nor a payload, or records whose JSON did not decode."""
    unknown: int = 0
    """Records of a kind tlparse does not know (yielded all the same)."""
    truncated: int = 0
    """A last record cut off by the end of the file (dropped)."""
    bytes: int = 0
    unknown_kinds: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        """The counts, for :attr:`nstviz.report.Run.log_stats`."""
        return {
            "records": self.records,
            "skipped": self.skipped,
            "unknown": self.unknown,
            "truncated": self.truncated,
            "bytes": self.bytes,
        }


def _open_binary(path: Path) -> BinaryIO:
    raw = path.open("rb")
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw  # type: ignore[return-value]


class TraceLogReader:
    """Iterate over the records of one TORCH_TRACE log file (see the module docstring).

    Args:
        path: the log file (plain or gzipped).
        keep_payload: the entry kinds whose payload lines are kept (others are skipped
            without being stored).
        skip_kinds: top-level kinds the caller ignores (``"describe_tensor"``...): their JSON is
            not decoded, they are counted as records and yielded with ``metadata=None``.
    """

    def __init__(
        self,
        path: str | Path,
        keep_payload: Container[str] | Callable[[str], bool] = (),
        *,
        skip_kinds: Container[str] = (),
    ) -> None:
        self.path = Path(path)
        self.stats = LogStats()
        self._skip_kinds = skip_kinds
        if callable(keep_payload):
            self._keep: Callable[[str], bool] = keep_payload  # type: ignore[assignment]
        else:
            self._keep = keep_payload.__contains__

    def __iter__(self) -> Iterator[Entry]:
        try:
            yield from self._read()
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise CorruptLogError(
                f"{self.path}: the gzip stream is corrupt ({exc}); re-copy the log, or gunzip it to see how much is left"
            ) from None
        except EOFError:
            raise TruncatedLogError(
                f"{self.path}: the gzip stream ends early (the file was cut off); "
                "the records before the cut can be read after `gunzip -c FILE > FILE.log`"
            ) from None

    def _read(self) -> Iterator[Entry]:
        stats = self.stats
        keep = self._keep
        binary = _open_binary(self.path)
        with io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline="\n") as text:
            pending: Entry | None = None
            lineno = 0
            seen_record = False
            last_line = ""
            payload_lines = 0
            for line in text:
                lineno += 1
                stats.bytes += len(line)
                last_line = line
                if line[:1] == "\t":
                    payload_lines += 1
                    if pending is not None and pending.payload is not None:
                        pending.payload.append(line[1:].rstrip("\n"))
                    continue
                if pending is not None:
                    yield pending
                    pending = None
                entry = self._record(line, lineno)
                if entry is None:
                    if not seen_record:
                        self._refuse_if_foreign(line, lineno)
                    if line.strip():
                        stats.skipped += 1
                    continue
                seen_record = True
                stats.records += 1
                if entry.kind.split(":", 1)[0] not in KNOWN_KINDS:
                    stats.unknown += 1
                    stats.unknown_kinds[entry.kind] = stats.unknown_kinds.get(entry.kind, 0) + 1
                if entry.has_payload and keep(entry.kind):
                    entry.payload = []
                pending = entry
                payload_lines = 0
            cut = bool(last_line) and not last_line.endswith("\n")
            if pending is not None:
                if cut or (pending.has_payload and payload_lines == 0):
                    # the file ends inside this record: its payload (or JSON) is incomplete
                    stats.truncated += 1
                    stats.records -= 1
                else:
                    yield pending
            elif cut and last_line.strip():
                stats.truncated += 1
                stats.skipped -= 1 if stats.skipped else 0
            if not seen_record:
                if lineno == 0:
                    raise TruncatedLogError(f"{self.path}: the log is empty (0 bytes): the job wrote nothing, or was killed first")
                if cut and lineno == 1:
                    raise TruncatedLogError(
                        f"{self.path}: the log ends inside its first record ({stats.bytes} bytes): nothing to read"
                    )
                raise ForeignLogError(
                    f"{self.path}: not a TORCH_TRACE log: no line of it is a glog record with JSON "
                    "(TORCH_TRACE=DIR writes dedicated_log_torch_trace_*.log files)"
                )

    def _record(self, line: str, lineno: int) -> Entry | None:
        cut = line.find("] {")
        if cut < 0 or not _GLOG_RE.match(line):
            return None
        if line[cut + 3 : cut + 4] == '"':  # the kind is the first key: skip ignored kinds undecoded
            end = line.find('"', cut + 4)
            if end > 0 and line[cut + 4 : end] in self._skip_kinds:
                return Entry(kind=line[cut + 4 : end], metadata=None, frame_id=None, compile_id=None, attempt=0,
                             rank=None, line=lineno, has_payload='"has_payload"' in line, site=_site(line, cut))
        try:
            data = json.loads(line[cut + 2 :])
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        kind = next((k for k in data if k not in _ID_KEYS), "")
        if not kind:
            return None
        meta = data[kind]
        if kind == "artifact" and isinstance(meta, dict):
            kind = f"artifact:{meta.get('name', '')}"
        frame = data.get("frame_id")
        compile_id = data.get("frame_compile_id")
        rank = data.get("rank")
        return Entry(
            kind=kind,
            metadata=meta,
            frame_id=frame if isinstance(frame, int) else None,
            compile_id=compile_id if isinstance(compile_id, int) else None,
            attempt=int(data.get("attempt") or 0) if isinstance(data.get("attempt") or 0, int) else 0,
            rank=rank if isinstance(rank, int) else None,
            line=lineno,
            has_payload=bool(data.get("has_payload")),
            site=_site(line, cut),
        )

    def _refuse_if_foreign(self, line: str, lineno: int) -> None:
        """Before the first record: fail fast on binary data or a file that is something else."""
        if "\x00" in line or line.count("\ufffd") > 4:
            raise CorruptLogError(
                f"{self.path}: line {lineno} is binary data, not text: this is not a readable TORCH_TRACE log "
                "(a gzipped log is read as is; other archives must be unpacked first)"
            )
        if lineno >= _SNIFF_LINES:
            shown = line.strip()[:80]
            raise ForeignLogError(
                f"{self.path}: not a TORCH_TRACE log: none of its first {_SNIFF_LINES} lines is a glog record "
                f"with JSON (line {lineno}: {shown!r}); give the files TORCH_TRACE=DIR wrote "
                "(dedicated_log_torch_trace_*.log)"
            )


def _site(line: str, cut: int) -> str:
    """The call site's file in a record's glog prefix (``V1201 12:00:00.0 123 path/x.py:42]``)."""
    head = line[:cut]
    return head[head.rfind(" ") + 1 :].rpartition(":")[0]


def read_entries(path: str | Path, keep_payload: Container[str] = ()) -> Iterator[Entry]:
    """Shorthand for ``iter(TraceLogReader(path, keep_payload))``."""
    return iter(TraceLogReader(path, keep_payload))


__all__ = ["KNOWN_KINDS", "Entry", "LogStats", "TraceLogReader", "read_entries"]
