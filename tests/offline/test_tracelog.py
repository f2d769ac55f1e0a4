"""The streaming TORCH_TRACE reader: records, payloads, and each kind of bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from nstviz.errors import CorruptLogError, ForeignLogError, TruncatedLogError
from nstviz.offline.tracelog import TraceLogReader
from tests.offline.conftest import log_of

RECORD = 'V1201 04:35:00.062000 6376 torch/_logging/_internal.py:1328] {"artifact": {"name": "torch_version", "encoding": "json"}, "has_payload": "x"}\n'
PAYLOAD = '\t{\n\t"pytorch_version": "2.13.0+cpu"\n\t}\n'
GRAPH = (
    'V1201 04:35:01.262000 6376 torch/_dynamo/output_graph.py:2841] {"dynamo_output_graph": {"sizes": {}}, '
    '"rank": 3, "frame_id": 4, "frame_compile_id": 0, "attempt": 1, "has_payload": "ca99"}\n'
    "\tclass GraphModule(torch.nn.Module):\n"
    '\t    def forward(self, L_x_: "f32[4][1]cpu"):\n'
    "\t        l_x_ = L_x_\n"
    '\t        h: "f32[4][1]cpu" = torch.relu(l_x_);  l_x_ = None\n'
    "\t        return (h,)\n"
)


def _plain(tmp_path: Path, side: str = "before", rank: int = 0) -> Path:
    target = tmp_path / f"dedicated_log_torch_trace_rank_{rank}_abc.log"
    target.write_bytes(gzip.decompress(log_of(side, rank).read_bytes()))
    return target


def test_reads_every_record_of_a_real_log_and_keeps_only_asked_payloads() -> None:
    reader = TraceLogReader(log_of("before", 0), {"dynamo_output_graph"})
    entries = list(reader)
    assert reader.stats.records == 263 == len(entries)
    assert (reader.stats.skipped, reader.stats.unknown, reader.stats.truncated) == (0, 0, 0)
    graphs = [e for e in entries if e.kind == "dynamo_output_graph"]
    assert [(e.frame_id, e.compile_id, e.attempt, e.rank) for e in graphs] == [(4, 0, 1, 0), (6, 0, 0, 0), (7, 0, 0, 0)]
    assert graphs[0].payload is not None and graphs[0].payload[0] == "class GraphModule(torch.nn.Module):"
    breaks = [e for e in entries if e.kind == "artifact:dynamo_graph_break_reason"]
    assert len(breaks) == 5 and all(e.payload is None for e in breaks)  # not asked for: not kept


def test_record_ids_and_payload_lines(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(RECORD + PAYLOAD + GRAPH, encoding="utf-8")
    entries = list(TraceLogReader(log, {"artifact:torch_version", "dynamo_output_graph"}))
    assert [e.kind for e in entries] == ["artifact:torch_version", "dynamo_output_graph"]
    assert entries[0].text == '{\n"pytorch_version": "2.13.0+cpu"\n}'
    assert (entries[1].rank, entries[1].frame_id, entries[1].compile_id, entries[1].attempt, entries[1].line) == (3, 4, 0, 1, 5)
    assert entries[1].payload[-1] == "        return (h,)"


def test_garbage_lines_and_unknown_kinds_are_counted_not_fatal(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    unknown = 'V1201 04:35:00.062000 6376 x.py:1] {"brand_new_kind": {}, "frame_id": 1}\n'
    bad_json = 'V1201 04:35:00.062000 6376 x.py:1] {"dynamo_start": {"stack": [\n'
    log.write_text(RECORD + PAYLOAD + "some stray text\n" + unknown + bad_json + GRAPH, encoding="utf-8")
    reader = TraceLogReader(log, {"dynamo_output_graph"})
    kinds = [e.kind for e in reader]
    assert kinds == ["artifact:torch_version", "brand_new_kind", "dynamo_output_graph"]
    assert (reader.stats.records, reader.stats.skipped, reader.stats.unknown, reader.stats.truncated) == (3, 2, 1, 0)
    assert reader.stats.unknown_kinds == {"brand_new_kind": 1}


def test_a_log_cut_inside_its_last_record_drops_that_record(tmp_path: Path) -> None:
    full = _plain(tmp_path)
    data = full.read_bytes()
    cut = data.rfind(b'{"dynamo_output_graph"') + 900  # inside the last Dynamo graph's payload
    full.write_bytes(data[:cut])
    reader = TraceLogReader(full, {"dynamo_output_graph"})
    entries = list(reader)
    assert reader.stats.truncated == 1
    assert [e.frame_id for e in entries if e.kind == "dynamo_output_graph"] == [4, 6]


def test_foreign_file_one_clear_message(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.log"
    foreign.write_text("".join(f"line {i}: just some text\n" for i in range(80)), encoding="utf-8")
    with pytest.raises(ForeignLogError, match=r"notes\.log: not a TORCH_TRACE log: none of its first 50 lines"):
        list(TraceLogReader(foreign))
    short = tmp_path / "short.log"
    short.write_text("hello\nworld\n", encoding="utf-8")
    with pytest.raises(ForeignLogError, match=r"short\.log: not a TORCH_TRACE log"):
        list(TraceLogReader(short))


def test_corrupt_file_one_clear_message(tmp_path: Path) -> None:
    binary = tmp_path / "trace.log"
    binary.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(CorruptLogError, match=r"trace\.log: line 1 is binary data"):
        list(TraceLogReader(binary))
    broken = tmp_path / "trace2.log.gz"
    data = bytearray(log_of("before", 0).read_bytes())
    data[-8:-4] = bytes(b ^ 0xFF for b in data[-8:-4])  # a wrong CRC: the data was damaged
    broken.write_bytes(bytes(data))
    with pytest.raises(CorruptLogError, match=r"trace2\.log\.gz: the gzip stream is corrupt"):
        list(TraceLogReader(broken))


def test_truncated_file_one_clear_message(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    with pytest.raises(TruncatedLogError, match=r"empty\.log: the log is empty \(0 bytes\)"):
        list(TraceLogReader(empty))
    cut_first = tmp_path / "first.log"
    cut_first.write_text(RECORD[:60], encoding="utf-8")
    with pytest.raises(TruncatedLogError, match=r"first\.log: the log ends inside its first record"):
        list(TraceLogReader(cut_first))
    cut_gz = tmp_path / "cut.log.gz"
    cut_gz.write_bytes(log_of("before", 0).read_bytes()[:5000])
    with pytest.raises(TruncatedLogError, match=r"cut\.log\.gz: the gzip stream ends early"):
        list(TraceLogReader(cut_gz))
