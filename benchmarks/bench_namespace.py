"""Memory and time of NamespaceCheckpoint on a training setup (nstviz.capture.namespace).

Run: python benchmarks/bench_namespace.py [--layers 6] [--d 256]
Builds a GPT-2 model offline from a config (random weights), runs one AdamW step so that
gradients and optimizer state exist, then measures the checkpoint: bytes copied vs the state
it protects (parameters + gradients + optimizer state), RSS growth, and the time to take,
restore and discard it.
"""

from __future__ import annotations

import argparse
import gc
import time

import psutil
import torch


def rss() -> int:
    return psutil.Process().memory_info().rss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--d", type=int, default=256)
    args = parser.parse_args()
    from transformers import GPT2Config, GPT2LMHeadModel

    from nstviz.capture.namespace import NamespaceCheckpoint

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=args.layers, n_embd=args.d, n_head=4, vocab_size=8000, n_positions=128)
    model = GPT2LMHeadModel(cfg)  # wte and lm_head share one weight
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    ids = torch.randint(0, 8000, (4, 64))
    model(ids, labels=ids).loss.backward()
    opt.step()
    sched.step()

    params = {id(p): p for p in model.parameters()}
    state = sum(p.nbytes for p in params.values())
    state += sum(p.grad.nbytes for p in params.values() if p.grad is not None)
    state += sum(t.nbytes for s in opt.state.values() for t in s.values() if isinstance(t, torch.Tensor))
    state += ids.nbytes
    ns = {"model": model, "opt": opt, "sched": sched, "ids": ids, "params": list(model.parameters())}

    gc.collect()
    before = rss()
    t0 = time.perf_counter()
    cp = NamespaceCheckpoint(ns)
    t_take = time.perf_counter() - t0
    grown = rss() - before
    model(ids, labels=ids).loss.backward()
    opt.step()
    sched.step()
    t0 = time.perf_counter()
    cp.restore()
    t_restore = time.perf_counter() - t0
    copied = cp.nbytes
    cp.discard()
    gc.collect()
    after_first = rss()
    for _ in range(5):  # repeated cycles must not keep growing
        cp = NamespaceCheckpoint(ns)
        model(ids, labels=ids).loss.backward()
        opt.step()
        cp.restore()
        cp.discard()
    gc.collect()
    print(f"torch {torch.__version__}; GPT-2 {args.layers} layers, d={args.d}: {sum(p.numel() for p in params.values()):,} parameters")
    print(f"state protected (params + grads + AdamW moments/steps + inputs): {state / 2**20:8.1f} MiB")
    print(f"bytes copied by the checkpoint:                                  {copied / 2**20:8.1f} MiB ({copied / state:.3f}x)")
    print(f"RSS growth when taking it:                                       {grown / 2**20:8.1f} MiB")
    print(f"take: {t_take * 1000:.0f} ms   restore: {t_restore * 1000:.0f} ms")
    print(f"RSS after 5 more take/train/restore/discard cycles vs after the first: {(rss() - after_first) / 2**20:+.1f} MiB")


if __name__ == "__main__":
    main()
