"""Ingest speed and memory on a >= 200 MB TORCH_TRACE log, side by side with tlparse.

Measures, in one run, on the same log (made by ``make_big_tracelog.py`` when missing):

- ``nstviz ingest`` (``write_ingested``: graphs parsed into nodes and edges, streamed into the
  Report JSON), in a child process: wall time, MB/s, peak RSS, and the RSS the imports alone
  take (so the ingest's own memory is the difference);
- the memory one graph costs: the largest graph's payload parsed under ``tracemalloc``, next to
  the ``tracemalloc`` peak of the whole ingest (bounded by the largest graph, not the log);
- ``tlparse LOG -o DIR --overwrite --no-browser`` (``pip install tlparse``): wall time, MB/s
  and peak RSS, measured the same way (``os.wait4`` of the child).

Usage: ``PYTHONPATH=$PWD python3 benchmarks/bench_ingest.py [--log PATH] [--mb 210]``

``--cold`` measures instead what a user waits for, a process per command, imports included:
``nstviz ingest`` of the largest recorded fixture (``tests/fixtures/tracelogs/before``, two
ranks, gunzipped: tlparse does not read gzip) and of a ~3 MB two-rank log made by repeating it, the import time of what
``nstviz ingest`` loads (and whether torch is among it: it must not be), and ``tlparse`` on the
same logs (``--tlparse PATH``, or ``tlparse`` on ``PATH``). Best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "tests" / "fixtures" / "tracelogs" / "before"
IMPORTS = (
    "import sys, time; t = time.perf_counter(); import nstviz.cli.main, nstviz.offline.ingest, nstviz.offline.diff; "
    "print(time.perf_counter() - t, 'torch' in sys.modules)"
)
DEFAULT_LOG = Path(tempfile.gettempdir()) / "nstviz-bench-ingest" / "dedicated_log_torch_trace_rank_0.log"

WARM = HERE.parent / "tests" / "fixtures" / "tracelogs" / "after" / "dedicated_log_torch_trace_rank_0.log.gz"
CHILD = r"""
import json, resource, sys, time, tracemalloc
from pathlib import Path

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0

t_import = time.perf_counter()
from nstviz.offline.ingest import write_ingested, GRAPH_LEVELS
from nstviz.offline.tracelog import TraceLogReader
from nstviz.offline.graph_text import parse_graph_text
from nstviz.report import Graph
from nstviz.tracing.stacks import StackTable
log, out, warm = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
write_ingested(warm, out)  # a small log first: lazy imports (the GB registry) settle
import_s = time.perf_counter() - t_import
rss_imports = rss_mb()
t0, c0 = time.perf_counter(), time.process_time()
report = write_ingested(log, out)
seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
run = report.runs["baseline"]
# the largest graph: its payload and what parsing it costs
largest, largest_lines = None, None
for e in TraceLogReader(log, set(GRAPH_LEVELS)):
    if e.payload is not None and (largest_lines is None or len(e.payload) > len(largest_lines)):
        largest, largest_lines = e, e.payload
tracemalloc.start()
write_ingested(log, out)
_, ingest_traced_peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
tracemalloc.start()
lines = list(largest_lines)
g = parse_graph_text(lines, Graph(id="g", level="aten_backward", frame_id=0, compile_id=0), stacks=StackTable())
_, graph_peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"seconds": seconds, "cpu": cpu, "import_s": import_s, "rss_imports_mb": rss_imports, "peak_rss_mb": peak,
    "graphs": sum(len(c.graph_ids) for c in run.compiles), "compiles": len(run.compiles), "breaks": len(run.breaks),
    "largest_graph_nodes": len(g.nodes), "largest_graph_payload_mb": sum(len(x) + 1 for x in largest_lines) / 1e6,
    "largest_graph_parse_peak_mb": graph_peak / 1e6, "ingest_traced_peak_mb": ingest_traced_peak / 1e6, "out_mb": out.stat().st_size / 1e6}))
"""


def timed_child(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, float, str]:
    """Run ``cmd``; return (wall seconds, CPU seconds, peak RSS in MB of that child, stdout)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with exit code {proc.returncode}:\n{text[-2000:]}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def _best(cmd: list[str], repeat: int, env: dict[str, str]) -> float:
    """Best wall time of ``repeat`` runs of ``cmd`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        best = min(best, timed_child(cmd, env)[0])
    return best


def _replicated(src: Path, dst: Path, total_mb: float) -> Path:
    """A copy of a TORCH_TRACE folder whose logs are each repeated until all make ``total_mb``."""
    import gzip

    logs = sorted(src.glob("*.log*"))
    texts = [(gzip.open(p, "rb").read() if p.suffix == ".gz" else p.read_bytes()) for p in logs]
    times = max(1, round(total_mb * 1e6 / sum(len(t) for t in texts)))
    dst.mkdir(parents=True, exist_ok=True)
    for p, text in zip(logs, texts, strict=True):
        (dst / p.name.removesuffix(".gz")).write_bytes(text * times)
    return dst


def cold(args: argparse.Namespace) -> None:
    """Process-per-command times, imports included (``--cold``)."""
    env = {**os.environ, "PYTHONPATH": str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    work = Path(tempfile.mkdtemp(prefix="nstviz-bench-cold-"))
    cwd = os.getcwd()
    os.chdir(work)  # `python -c` and `-m` put the current folder first on sys.path: not another nstviz
    try:
        plain = _replicated(FIXTURE, work / "fixture", 0.0)  # gunzipped: tlparse reads plain text only
        big = _replicated(FIXTURE, work / "three_mb", 3.0)
        imports = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True, env=env, check=True)
            seconds, torch_loaded = out.stdout.split()
            imports.append(float(seconds))
        print(f"import nstviz.cli.main + nstviz.offline (what `nstviz ingest` loads): {min(imports):.3f} s; torch imported: {torch_loaded}")
        tl = str(args.tlparse) if args.tlparse else shutil.which("tlparse")
        print(f"\n{'log':<44}{'MB':>6}{'nstviz ingest s':>17}{'tlparse s':>11}")
        for name, folder in (("largest fixture (before/, 2 ranks)", plain), ("~3 MB, 2 ranks (before/ repeated)", big)):
            logs = sorted(folder.glob("*.log*"))
            mb = sum(p.stat().st_size for p in logs) / 1e6
            cmd = [sys.executable, "-m", "nstviz", "ingest", str(folder), "--out", str(work / "out")]
            ours = _best(cmd, args.repeat, env)
            theirs = None
            if tl:
                theirs = sum(
                    _best([tl, str(p), "-o", str(work / f"tl_{p.name}"), "--overwrite", "--no-browser"], args.repeat, env)
                    for p in logs
                )
            print(f"{name:<44}{mb:>6.2f}{ours:>17.2f}{theirs if theirs is not None else float('nan'):>11.2f}")
        if not tl:
            print("tlparse: not found (pip install tlparse, or --tlparse PATH), not measured")
        else:
            print(f"(tlparse: {tl}, one process per rank's log, summed)")
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--mb", type=float, default=210.0, help="size of the log to make when missing")
    parser.add_argument("--cold", action="store_true", help="process-per-command times on the fixtures, imports included")
    parser.add_argument("--tlparse", type=Path, help="the tlparse executable (default: tlparse on PATH)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement in --cold (the best is shown)")
    args = parser.parse_args()
    if args.cold:
        cold(args)
        return
    if not args.log.is_file():
        print(f"making {args.log} ({args.mb:.0f} MB) ...", flush=True)
        subprocess.run([sys.executable, str(HERE / "make_big_tracelog.py"), "--out", str(args.log), "--mb", str(args.mb)], check=True)
    size_mb = args.log.stat().st_size / 1e6
    print(f"log: {args.log} ({size_mb:.1f} MB)")
    work = Path(tempfile.mkdtemp(prefix="nstviz-bench-ingest-"))
    try:
        env = {**os.environ, "PYTHONPATH": str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        _, _, _, text = timed_child([sys.executable, "-c", CHILD, str(args.log), str(work / "rank-0.nstviz.json"), str(WARM)], env)
        facts = json.loads(text.strip().splitlines()[-1])
        tl = shutil.which("tlparse")
        t_sec = t_cpu = t_rss = None
        if tl:
            t_sec, t_cpu, t_rss, _ = timed_child([tl, str(args.log), "-o", str(work / "tl_out"), "--overwrite", "--no-browser"])
        print()
        print(f"{'tool':<16}{'wall s':>9}{'MB/s':>8}{'CPU s':>8}{'MB/CPU-s':>10}{'peak RSS MB':>13}  output")
        sec, cpu = facts["seconds"], facts["cpu"]
        print(
            f"{'nstviz ingest':<16}{sec:>9.2f}{size_mb / sec:>8.1f}{cpu:>8.2f}{size_mb / cpu:>10.1f}{facts['peak_rss_mb']:>13.0f}  "
            f"Report JSON {facts['out_mb']:.0f} MB: {facts['graphs']} graphs as nodes+edges, {facts['compiles']} compiles"
        )
        if t_sec is not None:
            print(f"{'tlparse':<16}{t_sec:>9.2f}{size_mb / t_sec:>8.1f}{t_cpu:>8.2f}{size_mb / t_cpu:>10.1f}{t_rss:>13.0f}  HTML/text pages (no node-level graphs)")
            print(f"\nnstviz / tlparse: wall {sec / t_sec:.2f}x, CPU {cpu / t_cpu:.2f}x (goal: within 3x)")
        else:
            print("tlparse: not installed (pip install tlparse), not measured")
        print(f"(nstviz's rows exclude its one-time imports: nstviz takes ~{facts['import_s']:.1f} s to import in the child)")
        print(
            f"nstviz memory: {facts['rss_imports_mb']:.0f} MB RSS after imports, peak {facts['peak_rss_mb']:.0f} MB: "
            f"+{facts['peak_rss_mb'] - facts['rss_imports_mb']:.0f} MB for a {size_mb:.0f} MB log; "
            f"Python allocations peak (tracemalloc, whole ingest) {facts['ingest_traced_peak_mb']:.1f} MB"
        )
        print(
            f"largest graph: {facts['largest_graph_nodes']} nodes, payload {facts['largest_graph_payload_mb']:.2f} MB, "
            f"parse peak {facts['largest_graph_parse_peak_mb']:.1f} MB (tracemalloc)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
