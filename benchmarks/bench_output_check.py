"""Speed of the output check on big tensors (nstviz.capture.outputs).

Run: python benchmarks/bench_output_check.py [--n 50000000]
Prints seconds per comparison for equal, slightly different, and NaN-holding float32
tensors, an int64 tensor, and a pytree of many small tensors; plus snapshot_outputs time.
"""

from __future__ import annotations

import argparse
import time

import torch

from nstviz.capture.outputs import compare_outputs, snapshot_outputs


def timed(label: str, fn, repeat: int = 3) -> None:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    print(f"{label:<48} {best * 1000:9.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20_000_000, help="elements per big tensor")
    args = parser.parse_args()
    n = args.n
    torch.manual_seed(0)
    a = torch.randn(n)
    same = a.clone()
    near = a + 1e-7 * torch.randn(n)
    far = a.clone()
    far[n // 2] += 1.0
    nan = a.clone()
    nan[::1000] = float("nan")
    nan2 = nan.clone()
    ints = torch.randint(0, 1000, (n,))
    many = {f"layer{i}": (torch.randn(64, 64), torch.randn(64)) for i in range(500)}
    many2 = {k: (v[0].clone(), v[1].clone()) for k, v in many.items()}

    def cmp(x, y):
        return compare_outputs({"y": x}, {"y": y}, left_name="a", right_name="b")

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, n = {n:,} ({a.nbytes / 2**20:.0f} MiB per tensor)")
    timed("equal float32 (bitwise fast path)", lambda: cmp(a, same))
    timed("float32 within tolerance", lambda: cmp(a, near))
    timed("float32 one element off", lambda: cmp(a, far))
    timed("float32 with NaN at the same places", lambda: cmp(nan, nan2))
    timed("int64 equal", lambda: cmp(ints, ints.clone()))
    timed("500 x (64x64, 64) pytree equal", lambda: compare_outputs(many, many2, left_name="a", right_name="b"))
    timed("snapshot_outputs of one big tensor", lambda: snapshot_outputs({"y": a}))
    check = cmp(a, far)
    print(f"one element off -> match={check.match}, max_abs_diff={check.max_abs_diff:.3g}")


if __name__ == "__main__":
    main()
