"""Logs from any machine: the recorded fixtures read the same wherever torch was installed.

The fixtures were recorded with torch at ``/root/.pyenv/.../site-packages/torch`` (not where the
venvs running these tests have it). Here the same logs are rewritten as if recorded with torch in
a source checkout whose folder says nothing (``/opt/src/pt/torch``, glog paths relative to it),
and on Windows with conda (``C:\\...\\Lib\\site-packages\\torch``, backslashes): the breaks, their
user stacks and the compiles must come out the same. And the offline commands never import torch.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from nstviz.offline.ingest import ingest_log
from nstviz.report import Run
from tests.offline.conftest import TRACELOGS, log_of

ROOT = Path(__file__).resolve().parents[2]
RECORDED_PYTHON = "/root/.pyenv/versions/3.11.7/lib/python3.11/"
RECORDED_TORCH = RECORDED_PYTHON + "site-packages/torch/"
RECORDED_USER = "/work/wt-i12/tests/fixtures/tracelogs/"
_PATH_TAIL = r"[\w./<>-]*"


def _relocate(src: Path, dst: Path, paths: dict[str, Callable[[str], str]], site: Callable[[str], str]) -> Path:
    """Rewrite a log's recorded paths (in JSON records and in payload text) and glog sites."""
    pattern = re.compile("|".join(f"(?:{re.escape(prefix)}{_PATH_TAIL})" for prefix in paths))

    def new_path(old: str) -> str:
        prefix = next(p for p in paths if old.startswith(p))
        return paths[prefix](old)

    out = []
    with gzip.open(src, "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("\t"):
                out.append(pattern.sub(lambda m: new_path(m.group()), line))
                continue
            cut = line.find("] ")
            head, rest = (line[:cut], line[cut:]) if cut > 0 else ("", line)
            if head:
                pre, _, where = head.rpartition(" ")
                file, _, lineno = where.rpartition(":")
                head = f"{pre} {site(file)}:{lineno}"
            # in a JSON record a backslash is written twice
            rest = pattern.sub(lambda m: json.dumps(new_path(m.group()))[1:-1].replace('\\"', '"'), rest)
            out.append(head + rest)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(dst, "wt", encoding="utf-8") as f:
        f.writelines(out)
    return dst


def _checkout(src: Path, dst: Path) -> Path:
    return _relocate(
        src,
        dst,
        {RECORDED_TORCH: lambda p: "/opt/src/pt/torch/" + p[len(RECORDED_TORCH) :]},
        lambda s: s.replace("site-packages/torch/", "torch/", 1),
    )


def _windows(src: Path, dst: Path) -> Path:
    env = "C:\\Users\\me\\miniconda3\\envs\\job\\"

    def win(prefix: str, new: str) -> Callable[[str], str]:
        return lambda p: new + p[len(prefix) :].replace("/", "\\")

    return _relocate(
        src,
        dst,
        {
            RECORDED_TORCH: win(RECORDED_TORCH, env + "Lib\\site-packages\\torch\\"),
            RECORDED_PYTHON: win(RECORDED_PYTHON, env + "Lib\\"),
            RECORDED_USER: win(RECORDED_USER, "C:\\Users\\me\\job\\"),
        },
        lambda s: s.replace("/", "\\"),
    )


def _name(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]


def _shape(run: Run) -> list[tuple]:
    return [
        (
            b.gb_id, _name(b.location.file), b.location.line, b.location.function, b.count, b.compile_ids,
            tuple((_name(f.file), f.line, f.function) for f in b.stack),
        )
        for b in run.breaks
    ]  # fmt: skip


@pytest.mark.parametrize("layout", [_checkout, _windows], ids=["checkout", "windows-conda"])
@pytest.mark.parametrize(("side", "rank"), [("before", 1), ("after_diverge", 1)])
def test_relocated_logs_read_the_same(tmp_path: Path, layout: Callable[[Path, Path], Path], side: str, rank: int) -> None:
    recorded = ingest_log(log_of(side, rank)).runs["baseline"]
    relocated_log = layout(log_of(side, rank), tmp_path / side / f"dedicated_log_torch_trace_rank_{rank}.log.gz")
    assert RECORDED_TORCH.encode() not in gzip.decompress(relocated_log.read_bytes())  # no torch path left as it was
    moved = ingest_log(relocated_log).runs["baseline"]
    assert _shape(moved) == _shape(recorded)
    assert {_name(f.file) for b in moved.breaks for f in b.stack} == {"train_ddp.py"}  # no torch frame kept
    assert [(c.frame_id, c.compile_id, c.function) for c in moved.compiles] == [
        (c.frame_id, c.compile_id, c.function) for c in recorded.compiles
    ]
    assert [(g.id, g.op_count) for g in moved.graphs] == [(g.id, g.op_count) for g in recorded.graphs]


def test_the_recorded_fixture_reads_the_breaks_in_user_code() -> None:
    """What a venv whose torch lives elsewhere misread: the breaks put inside torch, an extra GB0007."""
    run = ingest_log(log_of("before", 0)).runs["baseline"]
    assert [(b.gb_id, _name(b.location.file), b.location.line, b.location.function) for b in run.breaks] == [
        ("GB0156", "train_ddp.py", 62, "<module>"),
        ("GB0007", "train_ddp.py", 62, "<module>"),
        ("GB0025", "train_ddp.py", 28, "rms_scale"),
    ]


_NO_TORCH = r"""
import sys
from nstviz.cli.main import main

out = sys.argv[1]
codes = [
    main(["ingest", sys.argv[2], "--out", out + "/before"]),
    main(["ingest", sys.argv[3], "--out", out + "/after"]),
    main(["diff", out + "/before", out + "/after", "--html", out + "/diff.html", "--json", out + "/diff.json"]),
    main(["diff", sys.argv[2], sys.argv[3], "--json", out + "/diff2.json"]),
    main(["view", out + "/diff.json", "-o", out + "/view.html"]),
    main(["view", sys.argv[4], "-o", out + "/view2.html"]),
    main(["check", out + "/before", out + "/after"]),
]
from nstviz.tracing.breaks import gb_registry

loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
print("RESULT", codes, loaded, bool(gb_registry()))
"""


def test_ingest_diff_view_and_check_do_not_import_torch(tmp_path: Path) -> None:
    """Through the CLI entry, in one process; the GB registry is still read (from torch's files)."""
    with_error = ROOT / "tests" / "fixtures" / "fullgraph_data_dependent.report.json"  # a run that raised
    proc = subprocess.run(
        [sys.executable, "-c", _NO_TORCH, str(tmp_path), str(TRACELOGS / "before"), str(TRACELOGS / "after"), str(with_error)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT"))
    assert result == "RESULT [0, 0, 0, 0, 0, 0, 0] [] True", proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "view2.html").is_file()
