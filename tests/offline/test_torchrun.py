"""A real 2-rank torchrun job on CPU (gloo, loopback): recorded by `nstviz record` and logged
with TORCH_TRACE at the same time, before (as written) and after (helper non-strict, and rank 1
taking a branch with one more graph break). Both diffs are checked with exact values.

Slow (two torchrun jobs, ~15 s each on 2 cores): the other offline tests use recorded logs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nstviz.offline.diff import diff_paths, offline_check_failures
from nstviz.report import Report

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "fixtures" / "tracelogs" / "train_ddp.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(cwd: Path, trace: str, out: str, *args: str) -> float:
    """`TORCH_TRACE=trace torchrun --nproc-per-node 2 -m nstviz record --out out ...`; seconds taken."""
    launcher = shutil.which("torchrun")
    cmd = [launcher] if launcher else [sys.executable, "-m", "torch.distributed.run"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "MASTER_ADDR": "127.0.0.1", "TORCH_TRACE": str(cwd / trace)}
    cmd += ["--nproc-per-node", "2", "--master-addr", "127.0.0.1", "--master-port", str(_free_port()), "-m", "nstviz", "record", "--out", out, *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return time.perf_counter() - start


def _where(breaks):
    return [(b.gb_id, b.location.line, b.location.function) for b in breaks]


def test_torchrun_record_and_torch_trace_diff(tmp_path: Path) -> None:
    t_before = torchrun(tmp_path, "trace_before", "before", str(SCRIPT))
    t_after = torchrun(tmp_path, "trace_after", "after", "--nonstrict", "rms_scale", str(SCRIPT), "--diverge")
    print(f"\ntorchrun durations: before {t_before:.1f} s, after {t_after:.1f} s")
    assert sorted(p.name for p in (tmp_path / "before").iterdir()) == ["rank-0.nstviz.json", "rank-1.nstviz.json"]
    rank1 = Report.load_json(tmp_path / "after" / "rank-1.nstviz.json").runs["nonstrict"]
    assert (rank1.rank, rank1.world_size, rank1.origin) == (1, 2, "record")
    assert [(m.spec, m.applied) for m in rank1.marked] == [("rms_scale", True)]
    assert len(list((tmp_path / "trace_before").glob("*.log"))) == 2

    for before, after in (("before", "after"), ("trace_before", "trace_after")):
        report = diff_paths(tmp_path / before, tmp_path / after)
        report.validate()
        assert report.rank == 0 and [v.rank for v in report.ranks] == [1], before
        assert _where(report.diff.resolved) == [("GB0025", 28, "rms_scale")], before
        assert _where(report.diff.remaining) == [("GB0156", 62, "<module>"), ("GB0007", 62, "<module>")], before
        assert report.diff.introduced == (), before
        assert (report.counts["baseline"].graphs, report.counts["nonstrict"].graphs) == (3, 1), before
        assert report.counts["nonstrict"].regions == 1, before
        rank1_diff = report.ranks[0].diff
        assert _where(rank1_diff.resolved) == [("GB0025", 28, "rms_scale")], before
        assert _where(rank1_diff.introduced) == [("GB0025", 52, "forward")], before
        (finding,) = report.findings
        assert (finding.kind, finding.run, finding.ranks) == ("ranks_differ", "nonstrict", (1,)), before
        assert finding.details == (
            "rank 1 compiled 2 graph(s), rank 0 1",
            "break only on rank 1: train_ddp.py:52 in forward (GB0025)",
        ), before
        assert offline_check_failures(report)[0] == "rank 1: 1 break(s) introduced: train_ddp.py:52 in forward (GB0025)"
    recorded = Report.load_json(tmp_path / "after" / "rank-0.nstviz.json").runs["nonstrict"]
    assert recorded.regions[0].approximate is False  # exact provenance when recorded in-process
