"""Writes the demo notebooks in ``notebooks/`` (run after editing: ``python tests/notebooks/build_notebooks.py``).

The notebooks are kept as code here so they stay small, reviewable and free of outputs;
``tests/notebooks/test_notebooks.py`` executes each one and asserts on what it shows.
"""

from __future__ import annotations

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = pathlib.Path(__file__).resolve().parents[2] / "notebooks"

SETUP = """%load_ext nstviz
import torch"""


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str):
    return new_code_cell(text.strip())


NOTEBOOKS = {
    "01-seed-example.ipynb": [
        md("""
# 1. A helper that breaks `fullgraph=True`, fixed by `nonstrict_trace`

`get_magic_num` does something `torch.compile` cannot trace (here an explicit
`torch._dynamo.graph_break()`, standing in for a C extension call or unsupported Python).
Called inside a `fullgraph=True` function, it makes compilation fail.

`%%nstrace --nonstrict get_magic_num` runs the cell **twice**: as written (the *baseline*),
then with `get_magic_num` traced by `torch._dynamo.nonstrict_trace`, without editing the
code. The view below the cell shows what broke, what changed, and the graphs, with the nodes
that came from `get_magic_num` highlighted.
"""),
        code(SETUP),
        code("""
def get_magic_num():
    torch._dynamo.graph_break()  # stands in for anything Dynamo cannot trace
    return torch.tensor([42.0])
"""),
        code("""
%%nstrace --nonstrict get_magic_num --name report
@torch.compile(fullgraph=True)
def func(x):
    return x + get_magic_num()

out = func(torch.ones(4))
"""),
        md("""
The baseline fails at the break (a *fatal* break under `fullgraph=True`), so it has no outputs
to compare; the nonstrict run compiles `func` as one graph, with the two ATen nodes of
`get_magic_num` inlined and highlighted. `--name report` bound the Report, plain data
you can read, save (`report.save_json(...)`) or turn into a standalone page (`--html PATH`).
"""),
        code("""
base, nst = report.counts["baseline"], report.counts["nonstrict"]
print(f"baseline: {base.breaks} break(s), nonstrict: {nst.breaks} break(s), one graph: {nst.full_graph}")
print("output check:", report.outputs.skipped_reason or report.outputs.match)
print("out =", out)
"""),
        md("""
The view is also a Python object: click a node or a break above, then read the selection
here (or drive the view with `w.select(node=...)`).
"""),
        code("""
from nstviz.jupyter import last_viewer

w = last_viewer()
w.selected_node, w.selected_break
"""),
    ],
    "02-module-helper.ipynb": [
        md("""
# 2. An `nn.Module` whose helper breaks in every block

`rms_scale` is called in each of the model's blocks. Dynamo cannot trace it, so the compiled
model falls apart into one graph per fragment. Traced non-strictly, the model compiles as one
graph, and the ATen nodes of each `rms_scale` call are highlighted as a region of their own.
"""),
        code(SETUP + "\nfrom torch import nn"),
        code("""
def rms_scale(h):
    torch._dynamo.graph_break()  # stands in for code Dynamo does not support
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


torch.manual_seed(0)
model = TinyNet()
x = torch.randn(2, 16)
"""),
        code("""
%%nstrace --nonstrict rms_scale --name report
compiled = torch.compile(model)
y = compiled(x)
"""),
        md("""
Before: one distinct break (seen once per block) and a graph per fragment. After: no break,
one graph, and three regions (one per call of `rms_scale`). In the graph view, pick the
nonstrict run and the *merged* mode to see which baseline fragment each ATen node came from.
"""),
        code("""
for run in ("baseline", "nonstrict"):
    c = report.counts[run]
    print(f"{run:>9}: {c.graphs} graphs, {c.breaks} distinct breaks ({c.break_hits} hits), {c.regions} regions")
"""),
    ],
    "03-transformers-model.ipynb": [
        md("""
# 3. A real transformers model: a custom attention kernel that breaks every layer

A GPT-2 model (built offline from a tiny config, random weights, nothing downloaded) runs with
a custom attention function registered through transformers' `AttentionInterface`, as people do
to plug in their own kernels. The kernel wrapper is opaque to Dynamo, so every layer breaks the
graph. Traced non-strictly, the whole model is one graph again.
"""),
        code(
            SETUP
            + """
import os

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing is downloaded: the model is built from a config
from transformers import AttentionInterface, GPT2Config, GPT2Model
"""
        ),
        code('''
def fused_softmax(scores):
    """Stand-in for a custom kernel Dynamo cannot trace (a C extension, a kernel launcher...)."""
    torch._dynamo.graph_break()
    return torch.softmax(scores, dim=-1)


def my_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    scores = query @ key.transpose(-1, -2) * (scaling or query.shape[-1] ** -0.5)
    if attention_mask is not None:
        scores = scores + attention_mask
    probs = fused_softmax(scores)
    return (probs @ value).transpose(1, 2).contiguous(), probs


AttentionInterface.register("my_attention", my_attention)
config = GPT2Config(
    n_layer=2, n_embd=32, n_head=2, vocab_size=100, n_positions=64,
    bos_token_id=0, eos_token_id=0, attn_implementation="my_attention",
)
torch.manual_seed(0)
model = GPT2Model(config).eval()
input_ids = torch.randint(0, 100, (1, 16))
'''),
        code("""
%%nstrace --nonstrict fused_softmax --name report
compiled = torch.compile(model)
with torch.no_grad():
    hidden = compiled(input_ids).last_hidden_state
"""),
        md("""
Note that the mark goes on the small tensor-in, tensor-out kernel wrapper, not on
`my_attention`: `nonstrict_trace` needs inputs it can flatten (tensors, numbers, lists...),
and `my_attention` receives the `module` itself.
"""),
        code("""
c0, c1 = report.counts["baseline"], report.counts["nonstrict"]
print(f"graphs {c0.graphs} -> {c1.graphs}, breaks {c0.breaks} -> {c1.breaks}, outputs match: {report.outputs.match}")
"""),
    ],
    "04-training-step.ipynb": [
        md("""
# 4. A training step: forward, backward and optimizer with `nonstrict_trace`

The helper `clip_activations` breaks the graph. Traced non-strictly, forward *and* backward
compile as one graph each, and the backward graph also carries the nodes of the region.
The output check compares the loss and the updated weights of both runs, which start from the
same RNG state and the same initial weights.
"""),
        code(SETUP + "\nfrom torch import nn"),
        code("""
def clip_activations(h):
    torch._dynamo.graph_break()  # stands in for code Dynamo does not support
    return h.clamp(-3.0, 3.0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(clip_activations(torch.tanh(self.fc1(x))))
"""),
        code("""
%%nstrace --nonstrict clip_activations --name report
torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model)
x, target = torch.randn(4, 8), torch.randn(4, 1)
loss = nn.functional.mse_loss(step(x), target)
loss.backward()
opt.step()
weight_after = model.fc1.weight.detach().clone()
"""),
        code("""
for run in ("baseline", "nonstrict"):
    levels = sorted({g.level for g in report.runs[run].graphs})
    print(f"{run:>9}: {report.counts[run].graphs} graphs, levels {levels}")
print("outputs match:", report.outputs.match)
"""),
    ],
    "05-auto-and-limits.ipynb": [
        md("""
# 5. `--auto`, and what `nonstrict_trace` cannot do

With `--auto`, nstviz proposes the functions to mark from the baseline's graph breaks (the
function that contains each break, then its callers), tries them, and keeps those that remove
breaks while the outputs still match. Each attempt runs the cell once more.
"""),
        code(SETUP),
        code("""
def normalize(h):
    torch._dynamo.graph_break()  # stands in for code Dynamo does not support
    return h / (h.norm(dim=-1, keepdim=True) + 1e-6)


def layer(x, w):
    return normalize(x @ w).relu()
"""),
        code("""
%%nstrace --auto --max-attempts 3 --name auto_report
torch.manual_seed(0)
w = torch.randn(8, 8)
f = torch.compile(lambda x: layer(layer(x, w), w))
y = f(torch.randn(2, 8))
"""),
        code("""
rec = auto_report.recommendation
print("recommended:", rec.functions if rec else None)
print(rec.code if rec else "")
"""),
        md("""
## When `nonstrict_trace` cannot help: data-dependent code

`positive_part` branches on the *value* of a tensor. Dynamo breaks there; `nonstrict_trace`
does not help, because it still traces with fake tensors that have no values: the nonstrict
run reports the failure (torch's GB0251 with the data-dependent operation as the root cause)
instead of removing the break. The break's own hint (`capture_scalar_outputs`) or rewriting
the branch with `torch.where` is the way out.
"""),
        code("""
def positive_part(h):
    if h.sum() > 0:  # depends on the data
        return h
    return -h
"""),
        code("""
%%nstrace --nonstrict positive_part --name dd_report
g = torch.compile(lambda x: positive_part(x * 2) + 1)
z = g(torch.randn(5))
"""),
        code("""
c0, c1 = dd_report.counts["baseline"], dd_report.counts["nonstrict"]
print(f"breaks {c0.breaks} -> {c1.breaks}")
"""),
        md("""
## When `nonstrict_trace` changes results: values baked in as constants

`scaled` reads `SCALE["s"]`, which is not one of its inputs. Traced non-strictly, the value
is read once while tracing and baked into the graph, with no guard: when the code changes it
afterwards, the compiled function keeps using the old value. The output check catches this,
and the view names the read next to the region.
"""),
        code("""
SCALE = {"s": 2.0}


def scaled(h):
    torch._dynamo.graph_break()  # stands in for code Dynamo does not support
    return h * SCALE["s"]
"""),
        code("""
%%nstrace --nonstrict scaled --name stale_report
SCALE["s"] = 2.0
k = torch.compile(lambda x: scaled(x) + 1)
first = k(torch.ones(3))
SCALE["s"] = 5.0
second = k(torch.ones(3))
"""),
        code("""
print("outputs match:", stale_report.outputs.match)
for d in stale_report.outputs.details:
    print(d.path, d.match, d.max_abs_diff)
"""),
    ],
}


def main() -> None:
    ROOT.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"c{i:02d}"
        nbformat.validate(nb)
        nbformat.write(nb, ROOT / name)
        print("wrote", ROOT / name)


if __name__ == "__main__":
    main()
