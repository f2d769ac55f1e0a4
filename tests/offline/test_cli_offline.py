"""`nstviz ingest`, `nstviz diff`, `nstviz check BEFORE AFTER` and `nstviz record` (one process)."""

from __future__ import annotations

import gzip
import io
import json
import textwrap
from pathlib import Path

from nstviz.cli.main import main
from nstviz.report import Report
from tests.offline.conftest import log_of


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_ingest_prints_one_line_per_rank(tmp_path: Path, tracelogs: Path) -> None:
    code, out, err = run_cli("ingest", str(tracelogs / "after"), "--out", str(tmp_path / "o"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        f"rank 0: 1 graph(s), 2 distinct break(s), 5 compile(s), 1 non-strict region(s) (approximate) -> {tmp_path / 'o' / 'rank-0.nstviz.json'}"
    )
    assert lines[1] == "  139 records; skipped 0, unknown 0, truncated 0"
    assert lines[2].startswith("rank 1: 1 graph(s), 2 distinct break(s)")


def test_diff_writes_html_and_json_and_names_the_odd_rank(tmp_path: Path, tracelogs: Path) -> None:
    html, js = tmp_path / "d.html", tmp_path / "d.json"
    code, out, err = run_cli("diff", str(tracelogs / "before"), str(tracelogs / "after_diverge"), "--html", str(html), "--json", str(js))
    assert code == 0, err
    assert "breaks: 1 resolved, 2 remaining, 0 introduced" in out
    assert (
        "ranks compared: 0, 1 (the table shows rank 0)\n"
        "  rank 0: breaks 3 -> 2, graphs 3 -> 1; 1 resolved, 2 remaining, 0 introduced\n"
        "  rank 1: breaks 3 -> 3, graphs 3 -> 2; 1 resolved, 2 remaining, 1 introduced\n"
    ) in out
    assert "finding: after: rank 1 compiled differently from rank 0" in out
    assert "  - break only on rank 1: train_ddp.py:52 in forward (GB0025)" in out
    data = json.loads(js.read_text())
    assert data["rank"] == 0 and [v["rank"] for v in data["ranks"]] == [1]
    assert data["findings"][0]["ranks"] == [1]
    assert html.stat().st_size > 50_000


def test_check_on_recorded_runs(tracelogs: Path) -> None:
    code, out, _ = run_cli("check", str(tracelogs / "before"), str(tracelogs / "after"))
    assert code == 0 and out.endswith("check passed\n")
    code, out, _ = run_cli("check", str(tracelogs / "before"), str(tracelogs / "after"), "--fail-on-break")
    assert code == 1 and "  - rank 1: 2 distinct break(s) remain (--fail-on-break)\n" in out
    code, out, _ = run_cli("check", str(tracelogs / "before"), str(tracelogs / "after_diverge"))
    assert code == 1
    assert "check FAILED:\n  - rank 1: 1 break(s) introduced: train_ddp.py:52 in forward (GB0025)\n" in out
    code, _, err = run_cli("check", str(tracelogs / "before"))
    assert code == 2 and "check with recorded runs takes two inputs: BEFORE AFTER" in err


def test_bad_logs_get_one_clear_message_each(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "dedicated_log_torch_trace_rank_0_x.log").write_text("hello\nthis is not a trace\n")
    code, out, err = run_cli("ingest", str(foreign), "--out", str(tmp_path / "o1"))
    assert code == 2 and out == ""
    assert err.splitlines()[0].endswith("dedicated_log_torch_trace_rank_0_x.log: not a TORCH_TRACE log: no line of it "
                                        "is a glog record with JSON (TORCH_TRACE=DIR writes dedicated_log_torch_trace_*.log files)")
    assert err.splitlines()[1] == "  hint: give the folder or files TORCH_TRACE=DIR wrote"

    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(b"\x00\x01\x02garbage\xff\xfe" * 100)
    code, _, err = run_cli("ingest", str(corrupt), "--out", str(tmp_path / "o2"))
    assert code == 2 and "dedicated_log_torch_trace_rank_0_x.log: line 1 is binary data, not text" in err

    truncated = tmp_path / "truncated"
    truncated.mkdir()
    (truncated / "dedicated_log_torch_trace_rank_0_x.log.gz").write_bytes(log_of("before", 0).read_bytes()[:3000])
    code, _, err = run_cli("ingest", str(truncated), "--out", str(tmp_path / "o3"))
    assert code == 2 and "dedicated_log_torch_trace_rank_0_x.log.gz: the gzip stream ends early (the file was cut off)" in err

    # a log cut inside its last record is read, with a note
    cut = tmp_path / "cut"
    cut.mkdir()
    text = gzip.decompress(log_of("after", 0).read_bytes())
    (cut / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(text[: len(text) - 500])
    code, out, err = run_cli("ingest", str(cut), "--out", str(tmp_path / "o4"))
    assert code == 0 and "truncated 1" in out
    assert "the log ends inside a record (the job was killed or the file cut): that record was dropped" in err


SCRIPT = """
import sys
import torch

def helper(x):
    torch._dynamo.graph_break()
    return x.sin() * 2

@torch.compile(backend="aot_eager")
def f(x):
    return helper(x + 1) - 1

steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 1
for _ in range(steps):
    f(torch.ones(3))
print("steps", steps)
"""


def test_record_one_process_writes_rank_0(tmp_path: Path, monkeypatch) -> None:
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(key, raising=False)
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    code, out, err = run_cli("record", "--out", str(tmp_path / "before"), "--quiet-script", str(script), "--steps", "2")
    assert code == 0, err
    assert out == f"nstviz record: rank 0: 3 graph(s), 1 distinct break(s), 0 non-strict region(s) -> {tmp_path / 'before' / 'rank-0.nstviz.json'}\n"
    before = Report.load_json(tmp_path / "before" / "rank-0.nstviz.json")
    run = before.runs["baseline"]
    assert (run.rank, run.world_size, run.origin, run.stdout) == (0, 1, "record", "steps 2\n")
    assert [(b.gb_id, b.location.line, b.location.function) for b in run.breaks] == [("GB0025", 6, "helper")]

    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    code, out, err = run_cli("record", "-n", "helper", "--out", str(tmp_path / "after"), "--quiet-script", str(script))
    assert code == 0, err
    after = Report.load_json(tmp_path / "after" / "rank-3.nstviz.json").runs["nonstrict"]
    assert (after.rank, after.world_size, after.breaks, [m.applied for m in after.marked]) == (3, 4, (), [True])
    assert [r.function for r in after.regions] == ["helper"] and not after.regions[0].approximate

    code, out, err = run_cli("record", "-n", "no_such_fn", "--out", str(tmp_path / "x"), "--quiet-script", str(script))
    assert code == 2
    assert "note: --nonstrict no_such_fn: no function of that name was defined while the script ran" in err

    monkeypatch.setenv("RANK", "one")
    code, _, err = run_cli("record", "--out", str(tmp_path / "y"), str(script))
    assert code == 2 and "environment variable RANK='one' is not an integer" in err
