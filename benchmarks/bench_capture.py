"""Capture-engine cost on a GPT-2-like model (6 layers) with a breaking helper per block.

``--side-by-side`` (issue 28): in ONE process per model size (12 and 48 blocks by default,
caches off), interleaved, best of ``--repeat``:

- R1 = ``compare(backend="aot_eager", time=False)`` / two plain ``torch.compile(backend="aot_eager")``
  compiles (as written, then with ``torch._dynamo.nonstrict_trace`` on the helper)   target <= 1.10;
  ``R1_record`` is the same with compare()'s default backend (``"record"``)
- R2 = ``compare(time=False)`` (default backend) / two plain inductor compiles  target <= 0.20

wall and CPU (``time.process_time``, all threads) each, with the Dynamo frame compiles and AOT
compiles each side made (they should be equal).

How the cost grows: both sides make the same 5 Dynamo frame compiles and 4 AOTAutograd
compiles at every size; the nonstrict compile traces every block (Dynamo, then AOTAutograd's
joint trace and partition), so compare() and the aot_eager pair grow alike (12 -> 48 blocks:
about 3.2x each). Inductor's pair grows less (2.2x wall) (its C++ compile of the few distinct kernels is
about constant), so R2 rises with the model: idle machine, before issue 28's last change,
R2 0.19 at 12 blocks and 0.23 at 48. Where a 48-block compare() goes (cProfile, thread CPU):
Dynamo's tracing and guards ~42%, AOTAutograd ~57% (joint trace 34%, partition 8%, metadata
pass 7%, graph printouts 4.5%), nstviz's own work ~3% (trace records, conversion, rollback,
Report). The printouts nobody read and the trace records nstviz drops are no longer made: at
48 blocks, in one process beside both pairs (load 1-2), compare() 19.3 -> 17.6 s wall, R1
1.07 -> 0.98, R2 0.25 -> 0.23 (two inductor compiles 76 s). Then the capture paced the garbage
collector (``nstviz/capture/gc_pace.py``; ``--unpaced`` adds compare() without it, side by side):
idle machine, best of 2, 48 blocks, compare() 11.56 -> 9.46 s, R1 0.92 -> 0.75, R2 0.238 -> 0.194.

Otherwise prints:
- compare() wall time / (2 x plain torch.compile with the same backend)    target <= 1.10
- compare() with its default timing / compare(time=False)                 target <= 1.30
- compare() (record backend) / one plain inductor compile                  target <= 0.50
- peak extra memory to capture >= 10,000 ATen nodes                        target <= 300 MB
- Report JSON bytes per node

Each measurement runs in a fresh subprocess so that no compile cache is warm.
Run: python benchmarks/bench_capture.py [--layers 6] [--big-layers 24]
     python benchmarks/bench_capture.py --side-by-side [--sizes 12 48] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

MODEL = textwrap.dedent(
    '''
    import math, zlib, time
    import torch
    from torch import nn

    def block_scale(x):
        s = zlib.crc32(b"nstviz") % 3 + 1   # Dynamo cannot trace this C function: a graph break
        return x * (1.0 / s)

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.h = h
        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, -1)
            q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            x = block_scale(x)
            return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, layers, d=64, h=4, vocab=256, ctx=32):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(layers))
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)
        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    def make(layers):
        torch.manual_seed(0)
        return GPT(layers), torch.randint(0, 256, (2, 32))
    '''
)

SCRIPTS = {
    "plain": MODEL + textwrap.dedent(
        '''
        model, idx = make(LAYERS)
        t, c = time.perf_counter(), time.process_time()
        torch.compile(model, backend=BACKEND)(idx)
        print(time.perf_counter() - t, time.process_time() - c)
        '''
    ),
    "compare": MODEL + textwrap.dedent(
        '''
        import nstviz
        model, idx = make(LAYERS)
        t, c = time.perf_counter(), time.process_time()
        report = nstviz.compare(model, idx, nonstrict=[block_scale], check=CHECK, **({} if TIME is None else {"time": TIME}))
        print(time.perf_counter() - t, time.process_time() - c)
        print(report.summary().splitlines()[0])
        '''
    ),
    "memory": MODEL + textwrap.dedent(
        '''
        import gc, tracemalloc, psutil, nstviz
        def train_step(model, idx):
            loss = model(idx).pow(2).mean()
            loss.backward()
            return loss

        model, idx = make(LAYERS)
        gc.collect()
        rss0 = psutil.Process().memory_info().rss
        tracemalloc.start()
        if PLAIN:  # the same work without nstviz: one compile of the nonstrict program
            marked = torch._dynamo.nonstrict_trace(block_scale)
            globals()["block_scale"] = marked
            train_step(torch.compile(model, backend="aot_eager"), idx)
            report = None
        else:
            report = nstviz.compare(train_step, model, idx, nonstrict=[block_scale], check=False)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss1 = psutil.Process().memory_info().rss
        if report is None:
            print(0, 0, peak, rss1 - rss0, 0)
        else:
            aten = sum(len(g.nodes) for run in report.runs.values() for g in run.graphs if g.level.startswith("aten"))
            nodes = sum(len(g.nodes) for run in report.runs.values() for g in run.graphs)
            text = report.to_json()
            print(aten, nodes, peak, rss1 - rss0, len(text.encode()))
        '''
    ),
}

SIDE_BY_SIDE = MODEL + textwrap.dedent(
    '''
    import json
    import nstviz
    from torch._dynamo.utils import counters

    def clock():
        return time.perf_counter(), time.process_time()

    def compiles():
        return {"dynamo_frames": counters["frames"]["ok"], "aot": counters["aot_autograd"]["total"]}

    def plain_pair(backend, layers):
        """What a user does by hand: compile as written, then with the helper marked."""
        global block_scale
        model, idx = make(layers)
        counters.clear()
        t = clock()
        torch.compile(model, backend=backend)(idx)
        torch._dynamo.reset()
        helper = block_scale
        block_scale = torch._dynamo.nonstrict_trace(helper)
        try:
            torch.compile(model, backend=backend)(idx)
        finally:
            block_scale = helper
        t2 = clock()
        torch._dynamo.reset()
        return t2[0] - t[0], t2[1] - t[1], compiles()

    def capture(layers, **backend):
        model, idx = make(layers)
        counters.clear()
        t = clock()
        nstviz.compare(model, idx, nonstrict=[block_scale], time=False, **backend)
        t2 = clock()
        return t2[0] - t[0], t2[1] - t[1], compiles()

    def capture_unpaced(layers):
        """compare() with the garbage collector left at Python's pace (nstviz.capture.gc_pace off)."""
        import contextlib
        from nstviz.capture import session
        paced = session.gc_pace.fewer_collections
        session.gc_pace.fewer_collections = contextlib.nullcontext
        try:
            return capture(layers)
        finally:
            session.gc_pace.fewer_collections = paced

    kinds = {"aot_eager": lambda n: plain_pair("aot_eager", n), "compare": capture,
             "compare_aot_eager": lambda n: capture(n, backend="aot_eager")}
    if UNPACED:
        kinds["compare_unpaced"] = capture_unpaced
    if INDUCTOR:
        kinds["inductor"] = lambda n: plain_pair("inductor", n)
    for kind in kinds.values():  # warm-up: lazy imports and first-use costs charged to no one
        kind(1)
    best = {}
    for r in range(REPEAT):
        order = list(kinds) if r % 2 == 0 else list(reversed(kinds))
        for name in order:
            wall, cpu, counts = kinds[name](LAYERS)
            old = best.get(name)
            best[name] = {"wall": min(wall, old["wall"]) if old else wall,
                          "cpu": min(cpu, old["cpu"]) if old else cpu, **counts}
    print(json.dumps(best))
    '''
)


def _run(kind: str, *, fresh_inductor_cache: bool = False, **consts: object) -> list[str]:
    head = "".join(f"{k} = {v!r}\n" for k, v in consts.items())
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="nstviz-bench-") as cache:
        if fresh_inductor_cache:  # a cold compile, as a user's first run sees it
            env["TORCHINDUCTOR_CACHE_DIR"] = cache
        out = subprocess.run(
            [sys.executable, "-c", head + (SIDE_BY_SIDE if kind == "side_by_side" else SCRIPTS[kind])], capture_output=True, text=True, check=False, env=env
        )
    if out.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{out.stderr[-3000:]}")
    return [line for line in out.stdout.splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument(
        "--big-layers", type=int, default=72, help="layers of the model trained (forward + backward) for the memory figure"
    )
    parser.add_argument("--skip-inductor", action="store_true")
    parser.add_argument("--only-inductor", action="store_true", help="only the compare / inductor ratio")
    parser.add_argument("--repeat", type=int, default=2, help="take the best of this many runs per timing")
    parser.add_argument(
        "--only-timing", action="store_true", help="only compare() default (timed) and time=False, over 2 plain compiles"
    )
    parser.add_argument("--side-by-side", action="store_true", help="R1 and R2 in one process per size (issue 28)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 48], help="blocks, for --side-by-side")
    parser.add_argument("--unpaced", action="store_true",
                        help="with --side-by-side, also compare() with the garbage collector at Python's pace")
    args = parser.parse_args()
    if args.side_by_side:
        _side_by_side(args.sizes, args.repeat, inductor=not args.skip_inductor, unpaced=args.unpaced)
        return

    def best(kind: str, repeat: int, **consts: object) -> tuple[float, float, list[str]]:
        runs = [_run(kind, fresh_inductor_cache=True, **consts) for _ in range(repeat)]
        walls = [float(r[0].split()[0]) for r in runs]
        cpus = [float(r[0].split()[1]) for r in runs]
        return min(walls), min(cpus), runs[0]

    r = args.repeat
    if args.only_inductor:
        ind_wall, ind_cpu, _ = best("plain", r, LAYERS=args.layers, BACKEND="inductor")
        cmp_wall, cmp_cpu, _ = best("compare", r, LAYERS=args.layers, CHECK=True, TIME=None)
        print(json.dumps({"plain_compile_inductor_s": round(ind_wall, 3), "compare_record_s": round(cmp_wall, 3),
                          "compare_over_1x_inductor": round(cmp_wall / ind_wall, 3)}, indent=2))
        return
    plain_wall, plain_cpu, _ = best("plain", r, LAYERS=args.layers, BACKEND="aot_eager")
    # compare() as a user calls it (output check, timing on) against the same without timing
    dflt_wall, dflt_cpu, _ = best("compare", r, LAYERS=args.layers, CHECK=True, TIME=None)
    untimed_wall, untimed_cpu, _ = best("compare", r, LAYERS=args.layers, CHECK=True, TIME=False)
    timing_figures = {
        "compare_default_s": {"wall": round(dflt_wall, 3), "cpu": round(dflt_cpu, 3)},
        "compare_time_false_s": {"wall": round(untimed_wall, 3), "cpu": round(untimed_cpu, 3)},
        "compare_default_over_time_false": {
            "wall": round(dflt_wall / untimed_wall, 3),
            "cpu": round(dflt_cpu / untimed_cpu, 3),
        },
        "compare_default_over_2x_plain": round(dflt_wall / (2 * plain_wall), 3),
        "compare_time_false_over_2x_plain": round(untimed_wall / (2 * plain_wall), 3),
    }
    if args.only_timing:
        print(json.dumps({"layers": args.layers, "repeat (best of)": r,
                          "plain_compile_aot_eager_s": round(plain_wall, 3), **timing_figures}, indent=2))
        return
    cmp_wall, cmp_cpu, lines = best("compare", r, LAYERS=args.layers, CHECK=False, TIME=None)
    chk_wall, chk_cpu, _ = best("compare", r, LAYERS=args.layers, CHECK=True, TIME=None)
    figures: dict[str, object] = {
        "layers": args.layers,
        "repeat (best of)": r,
        "headline": lines[1],
        "plain_compile_aot_eager_s": {"wall": round(plain_wall, 3), "cpu": round(plain_cpu, 3)},
        "compare_record_s": {"wall": round(cmp_wall, 3), "cpu": round(cmp_cpu, 3)},
        "compare_record_with_output_check_s": {"wall": round(chk_wall, 3), "cpu": round(chk_cpu, 3)},
        "compare_over_2x_plain": {"wall": round(cmp_wall / (2 * plain_wall), 3), "cpu": round(cmp_cpu / (2 * plain_cpu), 3)},
        "compare_with_check_over_2x_plain": {
            "wall": round(chk_wall / (2 * plain_wall), 3),
            "cpu": round(chk_cpu / (2 * plain_cpu), 3),
        },
        **timing_figures,
    }
    if not args.skip_inductor:
        ind_wall, ind_cpu, _ = best("plain", 1, LAYERS=args.layers, BACKEND="inductor")
        figures["plain_compile_inductor_s"] = {"wall": round(ind_wall, 3), "cpu": round(ind_cpu, 3)}
        figures["compare_over_1x_inductor"] = {"wall": round(cmp_wall / ind_wall, 3), "cpu": round(cmp_cpu / ind_cpu, 3)}
    aten, nodes, peak, rss, size = (int(v) for v in _run("memory", LAYERS=args.big_layers, PLAIN=False)[0].split())
    _, _, plain_peak, plain_rss, _ = (int(v) for v in _run("memory", LAYERS=args.big_layers, PLAIN=True)[0].split())
    figures.update(
        {
            "memory_model_layers": args.big_layers,
            "aten_nodes_captured": aten,
            "nodes_captured": nodes,
            "peak_traced_python_mb": {"compare": round(peak / 2**20, 1), "plain_compile": round(plain_peak / 2**20, 1)},
            "peak_extra_mb": round((peak - plain_peak) / 2**20, 1),
            "rss_growth_mb": {"compare": round(rss / 2**20, 1), "plain_compile": round(plain_rss / 2**20, 1)},
            "json_bytes": size,
            "json_bytes_per_node": round(size / max(nodes, 1), 1),
        }
    )
    print(json.dumps(figures, indent=2))


def _side_by_side(sizes: list[int], repeat: int, *, inductor: bool, unpaced: bool = False) -> None:
    """R1 and R2 per model size, each size in one process with every compile cache off."""
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"  # the subprocess inherits it
    figures: dict[str, object] = {"repeat (best of)": repeat}
    for layers in sizes:
        best = json.loads(_run("side_by_side", LAYERS=layers, REPEAT=repeat, INDUCTOR=inductor, UNPACED=unpaced)[-1])
        row: dict[str, object] = {k: {m: round(v, 3) if isinstance(v, float) else v for m, v in b.items()}
                                  for k, b in best.items()}
        ratios = (("R1_over_2x_aot_eager", "compare_aot_eager", "aot_eager"),  # compare(backend="aot_eager")
                  ("R1_record_over_2x_aot_eager", "compare", "aot_eager"),  # the default backend, "record"
                  ("R2_over_2x_inductor", "compare", "inductor"),
                  ("R1_record_over_2x_aot_eager_unpaced", "compare_unpaced", "aot_eager"),
                  ("R2_over_2x_inductor_unpaced", "compare_unpaced", "inductor"))
        for label, mine, plain in ratios:
            if plain in best and mine in best:
                row[label] = {m: round(best[mine][m] / best[plain][m], 3) for m in ("wall", "cpu")}
        figures[f"{layers}_blocks"] = row
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
