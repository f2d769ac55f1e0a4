"""Make a large TORCH_TRACE log (>= 200 MB by default) for ``bench_ingest.py``.

1. A real log: a deep MLP (``--depth`` Linear+ReLU blocks, a graph break every ``--every``
   blocks) is compiled with ``aot_eager`` and trained for one step under ``TORCH_TRACE``, in a
   subprocess: several compiles, each with a Dynamo, an ATen forward and an ATen backward graph
   of hundreds to thousands of nodes.
2. Its records are replicated, each copy with distinct frame ids (``frame_id + k * stride``),
   until the file reaches ``--mb`` megabytes: many compiles of large graphs, every record real.

Usage: ``python3 benchmarks/make_big_tracelog.py --out /tmp/big/dedicated_log_torch_trace_rank_0.log``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

JOB = """
import torch
from torch import nn
DEPTH, EVERY = {depth}, {every}


def stage():
    return nn.Sequential(*[m for _ in range(EVERY) for m in (nn.Linear(16, 16), nn.ReLU())])


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList(stage() for _ in range(DEPTH // EVERY))

    def forward(self, x):
{body}        return x


model = Deep()
compiled = torch.compile(model, backend="aot_eager")
compiled(torch.randn(4, 16)).sum().backward()
"""


def real_log(depth: int, every: int) -> Path:
    """Run the job under TORCH_TRACE; return its log."""
    out = Path(tempfile.mkdtemp(prefix="nstviz-bigtrace-"))
    script = out / "job.py"
    # unrolled: a graph break inside a Python loop would make Dynamo skip the whole frame
    body = "".join(f"        x = self.stages[{i}](x)\n        torch._dynamo.graph_break()\n" for i in range(depth // every))
    script.write_text(JOB.format(depth=depth, every=every, body=body))
    env = {**os.environ, "TORCH_TRACE": str(out / "trace")}
    subprocess.run([sys.executable, str(script)], env=env, check=True, timeout=1800)
    (log,) = (out / "trace").glob("*.log")
    return log


def records(path: Path) -> list[tuple[str, dict, list[str]]]:
    """(glog prefix, JSON, payload lines) of every record."""
    out: list[tuple[str, dict, list[str]]] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("\t"):
                out[-1][2].append(line)
                continue
            cut = line.index("] {")
            out.append((line[: cut + 2], json.loads(line[cut + 2 :]), []))
    return out


def replicate(src: Path, dst: Path, megabytes: float) -> int:
    """Write copies of ``src``'s records with distinct frame ids until ``dst`` is big enough."""
    recs = records(src)
    stride = 1 + max((d.get("frame_id") or 0) for _, d, _ in recs)
    target = int(megabytes * 1e6)
    copies = 0
    dst.parent.mkdir(parents=True, exist_ok=True)
    with dst.open("w", encoding="utf-8") as f:
        while f.tell() < target:
            for prefix, data, payload in recs:
                if copies and "str" in data:
                    continue  # interned strings once
                if "frame_id" in data and data["frame_id"] is not None:
                    data = {**data, "frame_id": data["frame_id"] + copies * stride}
                f.write(prefix + json.dumps(data) + "\n")
                f.writelines(payload)
            copies += 1
    return copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="the log file to write")
    parser.add_argument("--mb", type=float, default=210.0, help="size to reach (default %(default)s MB)")
    parser.add_argument("--depth", type=int, default=1200)
    parser.add_argument("--every", type=int, default=300)
    args = parser.parse_args()
    log = real_log(args.depth, args.every)
    copies = replicate(log, Path(args.out), args.mb)
    size = Path(args.out).stat().st_size
    print(f"real log {log.stat().st_size / 1e6:.1f} MB x {copies} copies -> {args.out} ({size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
