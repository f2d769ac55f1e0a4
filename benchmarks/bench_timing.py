"""What a fix buys, measured (issue 19 item 2): baseline vs non-strict, side by side in one run.

Run from the worktree root: ``PYTHONPATH=$PWD python benchmarks/bench_timing.py``
(``--backend aot_eager`` for a quick run, ``--threads 1`` on a busy machine, ``--budget 2``
seconds of measured calls per variant, ``--cases seed demo bigbird_eval``).

For each case, the code as written (baseline) and with the breaking function traced by
``torch._dynamo.nonstrict_trace`` (marked by id, as nstviz does), each measured by
:func:`nstviz.capture.timing.time_compiled`: Dynamo graphs, Dynamo's compile time, the first
call (cold start), the steady-state median ± half the IQR (warm-up excluded), and the same call
run eagerly, interleaved with the compiled calls. The last column says whether the fix is
measurably faster in the steady state (quartiles apart: :func:`nstviz.report.timing.compare_steady`).

Cases:
- ``seed``: the example of ``torch._dynamo.nonstrict_trace``'s documentation (/work/shared/seed):
  ``func(x) = x + get_magic_num()``, where ``get_magic_num`` calls ``graph_break()``. As written
  (``fullgraph=True``) it fails; the baseline is timed with ``fullgraph=False``, the fix with
  ``fullgraph=True``.
- ``demo``: ``nstviz demo``'s ``TinyNet`` (three blocks, each calling ``rms_scale``, which breaks).
- ``bigbird_eval``: the corpus job (tests/models/corpus.py), fixed by marking
  ``BigBirdBlockSparseAttention.forward`` (the advisor's verified recommendation).

A throw-away compile of a trivial function runs first, so the first case does not pay the
backend's one-time start-up; the baseline still runs before the fix, on the same warm process.

Measured 2026-12-01 on the shared 2-core machine (load average 5-6: other jobs ran meanwhile,
which the eager column shows; compare within a row, compiled vs eager, more than across rows),
``--threads 1``, torch 2.13.0 CPU (graphs, compile, steady median ± half the IQR, eager median)::

    --backend inductor --budget 2
    seed          baseline    2 graphs  5.35 s   62.4 µs ± 7.1   eager 30.6 µs
    seed          nonstrict   1 graph   2.68 s   24.2 µs ± 3.2   eager 18.0 µs   faster
    demo          baseline    4 graphs  7.97 s    408 µs ± 98    eager  219 µs
    demo          nonstrict   1 graph   5.98 s    107 µs ± 17    eager  169 µs   faster
    bigbird_eval  baseline   10 graphs   143 s   15.0 ms ± 6.7   eager 16.8 ms
    bigbird_eval  nonstrict   1 graph   38.4 s   1.03 ms ± 0.32  eager 6.55 ms   faster

    --backend aot_eager --budget 1
    seed          baseline    2 graphs   586 ms   115 µs ± 21    eager 40.2 µs
    seed          nonstrict   1 graph    398 ms   102 µs ± 18    eager 45.2 µs   same
    demo          baseline    4 graphs   1.40 s   414 µs ± 122   eager  130 µs
    demo          nonstrict   1 graph    855 ms   315 µs ± 81    eager  189 µs   same
    bigbird_eval  baseline   10 graphs   13.4 s  13.7 ms ± 3.1   eager 7.02 ms
    bigbird_eval  nonstrict   1 graph    4.83 s  6.93 ms ± 4.00  eager 7.12 ms   faster
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from nstviz.capture import marking
from nstviz.capture.timing import time_compiled
from nstviz.report.timing import RunTiming, compare_steady, format_seconds


def get_magic_num():
    """The seed's helper: an explicit graph break stands in for code Dynamo does not support."""
    torch._dynamo.graph_break()
    return torch.tensor([42])


def func(x):
    """The seed's function (there decorated ``@torch.compile(fullgraph=True)``)."""
    n = get_magic_num()
    return x + n


def rms_scale(h):
    """``nstviz demo``'s helper."""
    torch._dynamo.graph_break()
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return x + torch.relu(rms_scale(self.proj(x)))


class TinyNet(nn.Module):
    def __init__(self, dim=16, depth=3):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        return self.head(self.blocks(x))


Case = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], list[Callable[..., Any]], dict[str, Any], dict[str, Any]]
"""fn, args, kwargs, functions to mark, compile flags of the baseline, of the fix."""


def seed_case() -> Case:
    return func, (torch.rand(10),), {}, [get_magic_num], {"fullgraph": False}, {"fullgraph": True}


def demo_case() -> Case:
    torch.manual_seed(0)
    return TinyNet().eval(), (torch.randn(2, 16),), {}, [rms_scale], {}, {}


def bigbird_case() -> Case:
    sys.path.insert(0, ".")
    from transformers.models.big_bird import modeling_big_bird

    from tests.models.corpus import JOBS

    model, inputs = JOBS["bigbird_eval"].make()
    return model, (), inputs, [modeling_big_bird.BigBirdBlockSparseAttention.forward], {}, {}


CASES: dict[str, Callable[[], Case]] = {"seed": seed_case, "demo": demo_case, "bigbird_eval": bigbird_case}


def _row(case: str, variant: str, t: RunTiming, verdict: str) -> str:
    steady = t.steady
    assert steady is not None and t.eager is not None
    compile_text = format_seconds(t.compile_s) if t.compile_s is not None else "-"
    from nstviz.report.timing import format_call

    return (
        f"{case:<13} {variant:<10} {t.graphs:>6} {compile_text:>10} {format_seconds(t.first_call_s):>10}  "
        f"{format_call(steady):<32} {format_call(t.eager):<32} {t.speedup or 0:>5.2f}x  {verdict}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of measured calls per variant")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: as is)")
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    opts = parser.parse_args(argv)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    print(f"torch {torch.__version__}, backend {opts.backend}, {torch.get_num_threads()} intra-op threads, "
          f"budget {opts.budget} s per variant")
    t0 = time.perf_counter()
    time_compiled(lambda x: x.sin() + 1, (torch.randn(4),), backend=opts.backend, calls=1, warmup=0)
    print(f"(backend start-up, not counted: {time.perf_counter() - t0:.2f} s)")
    print(f"{'case':<13} {'variant':<10} {'graphs':>6} {'compile':>10} {'1st call':>10}  "
          f"{'steady (compiled)':<32} {'eager':<32} {'speedup':>6}  vs baseline")
    for name in opts.cases:
        fn, args, kwargs, marks, base_flags, fix_flags = CASES[name]()
        with torch.no_grad():
            base = time_compiled(fn, args, kwargs, backend=opts.backend, budget_s=opts.budget, **base_flags)
            print(_row(name, "baseline", base, ""), flush=True)
            with marking.marked(marks):
                fixed = time_compiled(fn, args, kwargs, backend=opts.backend, budget_s=opts.budget, **fix_flags)
        assert base.steady is not None and fixed.steady is not None
        print(_row(name, "nonstrict", fixed, compare_steady(base.steady, fixed.steady)), flush=True)


if __name__ == "__main__":
    main()
