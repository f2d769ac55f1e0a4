"""A real-model Report for the viewer benchmark: a GPT-2 training step from transformers.

Builds ``GPT2LMHeadModel`` offline from a small config (no download) with ``--layers`` blocks,
runs one forward + backward under ``nstviz.compare`` and writes the Report JSON. The ATen
backward graph has about 125 nodes per layer (about 3,000 at 24 layers, 10,000 at 80).
Compiling is slow (minutes for 80 layers); the viewer benchmark reads the file with ``--real``.

    python benchmarks/make_gpt2_report.py --layers 80 -o /tmp/gpt2-80.json
"""

from __future__ import annotations

import argparse
import time

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    from transformers import GPT2Config, GPT2LMHeadModel

    import nstviz

    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=args.layers, n_embd=64, n_head=2, vocab_size=512, n_positions=64,
                     bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 512, (2, 32))

    def step(ids):
        out = model(ids, labels=ids)
        out.loss.backward()
        return out.loss

    t0 = time.time()
    report = nstviz.compare(step, ids)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(report.to_json())
    sizes = {g.id: len(g.nodes) for g in report.runs["baseline"].graphs}
    print(f"wrote {args.output} in {time.time() - t0:.0f} s; graphs: {sizes}")


if __name__ == "__main__":
    main()
