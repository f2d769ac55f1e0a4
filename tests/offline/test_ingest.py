"""One rank's TORCH_TRACE log -> a single-run Report (the recorded 2-rank DDP fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nstviz.errors import UsageError
from nstviz.offline.ingest import find_logs, ingest_dir, ingest_log, write_ingested
from nstviz.report import Report
from tests.offline.conftest import log_of


def _breaks(run):
    return [(b.gb_id, Path(b.location.file).name, b.location.line, b.location.function, b.count, b.compile_ids) for b in run.breaks]


def test_before_log_breaks_compiles_and_graphs() -> None:
    report = ingest_log(log_of("before", 1))
    report.validate()
    run = report.runs["baseline"]
    assert (report.rank, run.rank, run.origin) == (1, 1, "torch_trace")
    assert report.torch_version == "2.13.0+cpu"
    assert _breaks(run) == [
        ("GB0156", "train_ddp.py", 62, "<module>", 1, ("0/0",)),
        ("GB0007", "train_ddp.py", 62, "<module>", 2, ("1/0", "2/0")),
        ("GB0025", "train_ddp.py", 28, "rms_scale", 2, ("4/0", "5/0")),
    ]
    helper = run.breaks[2]
    assert (helper.graph_before, helper.graph_after) == ("4/0_1:dynamo", "6/0:dynamo")
    assert helper.reason == "Call to `torch._dynamo.graph_break()`"
    assert [(g.id, g.op_count) for g in run.graphs] == [
        ("4/0_1:dynamo", 2), ("4/0_1:aten_forward", 5), ("4/0_1:aten_backward", 7),
        ("6/0:dynamo", 5), ("6/0:aten_forward", 5), ("6/0:aten_backward", 14),
        ("7/0:dynamo", 1), ("7/0:aten_forward", 2), ("7/0:aten_backward", 9),
    ]  # fmt: skip
    assert [(c.frame_id, c.compile_id, c.attempt, c.function) for c in run.compiles][4:] == [
        (4, 0, 1, "forward"),
        (5, 0, 1, "rms_scale"),
        (6, 0, 0, "torch_dynamo_resume_in_rms_scale_at_28"),
        (7, 0, 0, "torch_dynamo_resume_in_forward_at_50"),
    ]
    forward = run.compiles[4]
    assert forward.graph_ids == ("4/0_1:dynamo", "4/0_1:aten_forward", "4/0_1:aten_backward")
    assert forward.guards and forward.compile_time_s is not None and forward.compile_time_s > 0
    assert run.regions == ()
    assert run.log_stats == {"records": 263, "skipped": 0, "unknown": 0, "truncated": 0, "bytes": run.log_stats["bytes"]}


def test_after_log_recovers_the_nonstrict_region_approximately() -> None:
    run = ingest_log(log_of("after", 0)).runs["baseline"]
    assert [b.gb_id for b in run.breaks] == ["GB0156", "GB0007"]
    assert [g.id for g in run.graphs] == ["4/0:dynamo", "4/0:aten_forward", "4/0:aten_backward"]
    (region,) = run.regions
    assert (region.id, region.function, region.approximate) == ("r0", "rms_scale", True)
    assert (region.call_graph, region.call_node) == ("4/0:dynamo", "flat_apply_capture")
    assert (Path(region.call_site.file).name, region.call_site.line, region.call_site.code) == ("train_ddp.py", 50, "h = rms_scale(h)")
    assert region.nodes == {
        "4/0:aten_forward": ("pow_1", "mean", "add", "rsqrt", "mul"),
        "4/0:aten_backward": (
            "mul_1", "mul_2", "sum_2", "detach_1", "detach_2", "pow_2", "mul_3",
            "mul_4", "expand", "div", "pow_3", "mul_5", "mul_6", "add_1",
        ),
    }  # fmt: skip
    forward = next(g for g in run.graphs if g.id == "4/0:aten_forward")
    assert [n.name for n in forward.nodes if n.region == "r0"] == ["pow_1", "mean", "add", "rsqrt", "mul"]
    dyn = run.graphs[0]
    assert [n.name for n in dyn.nodes if n.nonstrict_call] == ["flat_apply_capture"]


def test_streamed_file_equals_the_in_memory_report(tmp_path: Path) -> None:
    out = tmp_path / "rank-0.nstviz.json"
    write_ingested(log_of("after", 0), out)
    streamed = Report.load_json(out)
    streamed.validate()
    memory = ingest_log(log_of("after", 0))
    assert streamed.runs == memory.runs
    assert streamed.stacks == memory.stacks
    assert streamed.counts == memory.counts  # counted from the graphs, also when they were streamed
    c = streamed.counts["baseline"]
    assert (c.graphs, c.breaks, c.break_hits, c.ops, c.aten_ops) == (1, 2, 3, 5, 10)
    assert json.loads(out.read_text())["runs"]["baseline"]["graphs"][0]["id"] == "4/0:dynamo"


def test_ingest_dir_writes_one_file_per_rank(tmp_path: Path, tracelogs: Path) -> None:
    written = ingest_dir(tracelogs / "after_diverge", tmp_path / "out")
    assert [p.name for p, _ in written] == ["rank-0.nstviz.json", "rank-1.nstviz.json"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["rank-0.nstviz.json", "rank-1.nstviz.json"]
    rank1 = Report.load_json(tmp_path / "out" / "rank-1.nstviz.json").runs["baseline"]
    assert [(b.gb_id, b.location.line) for b in rank1.breaks] == [("GB0156", 62), ("GB0007", 62), ("GB0025", 52)]


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"holds no \*\.log files"):
        find_logs(tmp_path)
    with pytest.raises(UsageError, match="no such TORCH_TRACE folder or file"):
        find_logs(tmp_path / "nope")


def test_fast_graph_encoding_equals_the_report_codec() -> None:
    from nstviz.offline.ingest import graph_dict
    from nstviz.report._codec import _encode

    for side in ("before", "after"):
        for graph in ingest_log(log_of(side, 0)).runs["baseline"].graphs:
            assert json.dumps(graph_dict(graph)) == json.dumps(_encode(graph))


def test_fullgraph_failure_is_a_fatal_break_at_the_user_frame(tracelogs: Path) -> None:
    run = ingest_log(tracelogs / "fullgraph" / "dedicated_log_torch_trace.log.gz").runs["baseline"]
    (brk,) = run.breaks
    assert (brk.gb_id, brk.fatal, brk.count, brk.compile_ids) == ("GB0025", True, 1, ("0/0",))
    assert [(Path(f.file).name, f.line, f.function) for f in brk.stack] == [
        ("fullgraph_job.py", 12, "f"),
        ("fullgraph_job.py", 7, "helper"),
    ]
    assert brk.reason == "Call to `torch._dynamo.graph_break()`"
    assert run.graphs == () and run.rank == 0
    assert run.compiles[0].fail_reason.startswith("Call to `torch._dynamo.graph_break()`")


def test_recompile_reason_and_guards(tracelogs: Path) -> None:
    run = ingest_log(tracelogs / "recompile" / "dedicated_log_torch_trace.log.gz").runs["baseline"]
    assert [(c.frame_id, c.compile_id, c.function, c.recompile_reason, c.graph_ids) for c in run.compiles] == [
        (0, 0, "f", None, ("0/0:dynamo", "0/0:aten_inference")),
        (0, 1, "f", "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4", ("0/1:dynamo", "0/1:aten_inference")),
    ]
    assert all(c.guards for c in run.compiles) and run.breaks == ()
    inference = next(g for g in run.graphs if g.id == "0/1:aten_inference")
    assert [n.target for n in inference.nodes if n.op == "call_function"] == ["aten.sin.default", "aten.add.Tensor"]
    assert inference.nodes[0].tensors[0].shape == (4,)


def test_inductor_log_has_the_post_grad_graph_and_infix_operators(tracelogs: Path) -> None:
    run = ingest_log(tracelogs / "inductor" / "dedicated_log_torch_trace.log.gz").runs["baseline"]
    assert [(g.id, g.level) for g in run.graphs] == [
        ("0/0:dynamo", "dynamo"),
        ("0/0:aten_inference", "aten_inference"),
        ("0/0:inductor_post_grad", "inductor_post_grad"),
    ]
    dynamo, _, post = run.graphs
    assert [(n.name, n.op, n.target, n.inputs) for n in dynamo.nodes] == [
        ("l_x_", "placeholder", "L_x_", ()),
        ("sin", "call_method", "sin", ("l_x_",)),
        ("mul", "call_function", "operator.mul", ("sin",)),
        ("relu", "call_function", "torch.relu", ("mul",)),
        ("add", "call_function", "operator.add", ("relu",)),
        ("output", "output", "output", ("add",)),
    ]
    assert [n.target for n in post.nodes if n.op == "call_function"] == [
        "aten.sin.default", "aten.mul.Tensor", "aten.relu.default", "aten.add.Tensor",
    ]  # fmt: skip
    assert run.compiles[0].graph_ids == ("0/0:dynamo", "0/0:aten_inference", "0/0:inductor_post_grad")
