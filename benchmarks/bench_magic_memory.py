"""Kernel memory over repeated ``%%nstrace`` runs (figures for the closing note).

Starts a real ipykernel, defines notebook 2's model, then runs its ``%%nstrace`` cell N times
(a) re-running ONE cell (the execute requests carry the same ``cellId``, as JupyterLab sends)
and (b) as N DIFFERENT cells. Prints the kernel's RSS after a warm-up and after the runs.
In (a) the magic closes the previous run's widget, so memory should stay flat; in (b) every
widget stays displayed, so each keeps its Report JSON (its size is printed too).

    python benchmarks/bench_magic_memory.py [-n 30]
"""

from __future__ import annotations

import argparse
import time

import psutil
from jupyter_client.manager import start_new_kernel

SETUP = """
%load_ext nstviz
import torch
from torch import nn

def rms_scale(h):
    torch._dynamo.graph_break()
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)

class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
    def forward(self, x):
        return x + torch.relu(rms_scale(self.proj(x)))

model = nn.Sequential(*[Block(16) for _ in range(3)])
x = torch.randn(2, 16)
"""
CELL = "%%nstrace --nonstrict rms_scale\ny = torch.compile(model)(x)\n"


def run(kc, code: str, cell_id: str | None = None) -> None:
    msg = kc.session.msg(
        "execute_request",
        {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False},
        metadata={"cellId": cell_id} if cell_id else {},
    )
    kc.shell_channel.send(msg)
    while True:
        reply = kc.get_shell_msg(timeout=300)
        if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
            assert reply["content"]["status"] == "ok", reply["content"]
            return


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=30, help="runs per scenario")
    args = parser.parse_args()
    for scenario in ("same cell", "different cells"):
        km, kc = start_new_kernel(kernel_name="python3")
        try:
            pid = km.provisioner.process.pid
            run(kc, SETUP)
            for i in range(3):  # warm-up: imports, first compiles, caches
                run(kc, CELL, "warm" if scenario == "same cell" else f"warm{i}")
            base = rss_mb(pid)
            start = time.perf_counter()
            for i in range(args.n):
                run(kc, CELL, "cell" if scenario == "same cell" else f"cell{i}")
            elapsed = time.perf_counter() - start
            after = rss_mb(pid)
            out: list[str] = []
            kc.execute_interactive(
                "import gc, ipywidgets.widgets.widget as _w; gc.collect();"
                "_v = [w for w in _w._instances.values() if type(w).__name__ == 'Viewer'];"
                "print(len(_v), sum(len(w.report_json) for w in _v))",
                timeout=60,
                output_hook=lambda m, out=out: out.append(m["content"].get("text", "")),
            )
            viewers, json_bytes = (int(v) for v in "".join(out).split())
            print(
                f"{scenario:>15}: {args.n} runs in {elapsed:.1f} s ({elapsed / args.n:.2f} s/run); "
                f"RSS {base:.0f} -> {after:.0f} MiB ({(after - base) / args.n * 1024:+.0f} KiB/run); "
                f"{viewers} live viewers holding {json_bytes / 1024:.0f} KiB of Report JSON"
            )
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
