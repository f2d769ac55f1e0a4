"""Synthetic but schema-valid nstviz Reports of any size, for viewer tests and benchmarks.

The graphs imitate what the capture engine records for a GPT-2-like model: ATen nodes with
``nn.Module`` paths (``transformer.h.3.attn.c_attn``), tensor metadata, user stacks into a
source file, one non-strict region per block (``Block.stats``) whose inlined nodes carry the
region id, a Dynamo graph with the opaque non-strict call node, baseline runs split into
several graphs by breaks, and a nonstrict run that is one full graph.

Usage::

    python benchmarks/make_synthetic_report.py 10000 -o /tmp/r10k.json [--flat]
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nstviz.passes.assemble import build_report
from nstviz.report import (
    Break,
    BreakDiff,
    Candidate,
    Graph,
    Location,
    MarkedFunction,
    Node,
    OutputCheck,
    OutputDetail,
    Recommendation,
    Region,
    Report,
    Run,
    SourceFile,
    TensorInfo,
)

SOURCE_PATH = "/home/user/project/model.py"
SOURCE = '''import torch
import torch.nn as nn

MAGIC = {"scale": 3}


def get_magic_num():
    torch._dynamo.graph_break()
    return MAGIC["scale"]


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=-1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / k.shape[-1] ** 0.5)
        att = att.softmax(dim=-1)
        return self.c_proj(att @ v)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.c_proj(torch.nn.functional.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = Attention(d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def stats(self, x):
        print("mean", x.mean().item())
        return x * get_magic_num() + x.std()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = self.stats(x)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, n_layer, d):
        super().__init__()
        self.wte = nn.Embedding(50257, d)
        self.h = nn.ModuleList(Block(d) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, 50257, bias=False)

    def forward(self, idx):
        x = self.wte(idx)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


model = torch.compile(GPT(24, 64))
out = model(torch.randint(0, 50257, (2, 16)))
'''
_SNIPPETS = {  # source line of each role, found by its text
    "attn": "q, k, v = self.c_attn(x)", "att": "att = (q @ k.transpose", "softmax": "att = att.softmax",
    "attn_proj": "return self.c_proj(att @ v)", "mlp": "return self.c_proj(torch.nn.functional.gelu",
    "gelu": "return self.c_proj(torch.nn.functional.gelu", "ln_1": "x = x + self.attn(self.ln_1(x))",
    "ln_2": "return x + self.mlp(self.ln_2(x))", "stats": "return x * get_magic_num() + x.std()",
    "stats_call": "x = self.stats(x)", "magic": "torch._dynamo.graph_break()", "wte": "x = self.wte(idx)",
    "head": "return self.lm_head(self.ln_f(x))", "block": "x = block(x)", "item": 'print("mean", x.mean().item())',
}
LINE = {role: next(i + 1 for i, line in enumerate(SOURCE.splitlines()) if snippet in line) for role, snippet in _SNIPPETS.items()}
HOSTILE = '</script><img src=x onerror="window.__pwned=1">\u2028<b>bold</b> javascript:alert(1)'


def _t(*shape: int | str, dtype: str = "f32") -> tuple[TensorInfo, ...]:
    return (TensorInfo(shape=tuple(shape), dtype=dtype, device="cpu"),)


class _GraphBuilder:
    def __init__(self, stacks: list[tuple[Location, ...]], stack_ids: dict[tuple[str, int], int]):
        self.nodes: list[Node] = []
        self.names: set[str] = set()
        self.stacks = stacks
        self.stack_ids = stack_ids

    def stack(self, func: str, role: str) -> int:
        key = (func, LINE[role])
        if key not in self.stack_ids:
            outer = Location(file=SOURCE_PATH, line=LINE["block"], function="forward", code="x = block(x)")
            inner = Location(file=SOURCE_PATH, line=LINE[role], function=func,
                             code=SOURCE.splitlines()[LINE[role] - 1].strip())
            self.stack_ids[key] = len(self.stacks)
            self.stacks.append((outer, inner))
        return self.stack_ids[key]

    def add(self, base: str, op: str, target: str, inputs: list[str], **kw) -> str:
        name = base
        k = 1
        while name in self.names:
            name = f"{base}_{k}"
            k += 1
        self.names.add(name)
        self.nodes.append(Node(name=name, op=op, target=target, inputs=tuple(inputs), **kw))
        return name


def _block(b: _GraphBuilder, i: int, x: str, params: list[str], region: str | None, d: int,
           seq: int, inline_region: bool, baseline_graph: str | None, dynamo: bool) -> str:
    pre = f"transformer.h.{i}"
    bg = {"baseline_graph": baseline_graph} if baseline_graph else {}

    def p(name: str, *shape: int) -> str:
        n = b.add(f"p_{pre.replace('.', '_')}_{name}", "placeholder", f"p_{name}", [],
                  tensors=_t(*shape))
        params.append(n)
        return n

    def op(base, target, ins, module, mtype, role, *shape, func="forward", **kw):
        return b.add(base, "call_function", target, ins, module=module, module_type=mtype,
                     stack=b.stack(func, role), tensors=_t(*shape), **{**bg, **kw})

    ln1w, ln1b = p("ln_1_weight", d), p("ln_1_bias", d)
    h = op("native_layer_norm", "aten.native_layer_norm.default", [x, ln1w, ln1b], f"{pre}.ln_1", "LayerNorm", "ln_1", 2, seq, d)
    h = op("getitem", "_operator.getitem", [h], f"{pre}.ln_1", "LayerNorm", "ln_1", 2, seq, d)
    w, bias = p("attn_c_attn_weight", 3 * d, d), p("attn_c_attn_bias", 3 * d)
    t = op("t", "aten.t.default", [w], f"{pre}.attn.c_attn", "Linear", "attn", d, 3 * d)
    v = op("view", "aten.view.default", [h], f"{pre}.attn.c_attn", "Linear", "attn", 2 * seq, d)
    mm = op("addmm", "aten.addmm.default", [bias, v, t], f"{pre}.attn.c_attn", "Linear", "attn", 2 * seq, 3 * d)
    qkv = op("view", "aten.view.default", [mm], f"{pre}.attn.c_attn", "Linear", "attn", 2, seq, 3 * d)
    q = op("split", "aten.split.Tensor", [qkv], f"{pre}.attn", "Attention", "attn", 2, seq, d)
    qs = [op("getitem", "_operator.getitem", [q], f"{pre}.attn", "Attention", "attn", 2, seq, d) for _ in range(3)]
    kt = op("transpose", "aten.transpose.int", [qs[1]], f"{pre}.attn", "Attention", "att", 2, d, seq)
    att = op("bmm", "aten.bmm.default", [qs[0], kt], f"{pre}.attn", "Attention", "att", 2, seq, seq)
    att = op("mul", "aten.mul.Tensor", [att], f"{pre}.attn", "Attention", "att", 2, seq, seq)
    att = op("softmax", "aten._softmax.default", [att], f"{pre}.attn", "Attention", "softmax", 2, seq, seq)
    y = op("bmm", "aten.bmm.default", [att, qs[2]], f"{pre}.attn", "Attention", "attn_proj", 2, seq, d)
    w2, b2 = p("attn_c_proj_weight", d, d), p("attn_c_proj_bias", d)
    t2 = op("t", "aten.t.default", [w2], f"{pre}.attn.c_proj", "Linear", "attn_proj", d, d)
    y = op("addmm", "aten.addmm.default", [b2, y, t2], f"{pre}.attn.c_proj", "Linear", "attn_proj", 2 * seq, d)
    x = op("add", "aten.add.Tensor", [x, y], pre, "Block", "ln_1", 2, seq, d)
    # the non-strict helper Block.stats
    if region is not None and inline_region:
        kw = {"region": region}
        m = op("mean", "aten.mean.default", [x], pre, "Block", "stats", func="stats", **kw)
        s = op("std", "aten.std.correction", [x], pre, "Block", "stats", func="stats", **kw)
        c = op("mul", "aten.mul.Tensor", [x], pre, "Block", "stats", 2, seq, d, func="stats", **kw)
        x = op("add", "aten.add.Tensor", [c, s], pre, "Block", "stats", 2, seq, d, func="stats", **kw)
        del m
    elif region is not None:
        cal = b.add(f"stats_callable_{i}", "get_attr", f"Block_stats_callable_{i}", [], module=pre)
        spec = b.add(f"stats_input_spec_{i}", "get_attr", f"Block_stats_input_spec_{i}", [], module=pre)
        fa = b.add("flat_apply_capture", "call_function", "torch__dynamo_variables_torch_flat_apply_capture",
                   [cal, spec, x], module=pre, module_type="Block", nonstrict_call=True,
                   stack=b.stack("forward", "stats_call"), tensors=_t(2, seq, d))
        x = b.add("getitem", "call_function", "_operator.getitem", [fa], module=pre, module_type="Block",
                  stack=b.stack("forward", "stats_call"), tensors=_t(2, seq, d))
    ln2w, ln2b = p("ln_2_weight", d), p("ln_2_bias", d)
    h = op("native_layer_norm", "aten.native_layer_norm.default", [x, ln2w, ln2b], f"{pre}.ln_2", "LayerNorm", "ln_2", 2, seq, d)
    w3, b3 = p("mlp_c_fc_weight", 4 * d, d), p("mlp_c_fc_bias", 4 * d)
    t3 = op("t", "aten.t.default", [w3], f"{pre}.mlp.c_fc", "Linear", "mlp", d, 4 * d)
    hh = op("addmm", "aten.addmm.default", [b3, h, t3], f"{pre}.mlp.c_fc", "Linear", "mlp", 2 * seq, 4 * d)
    hh = op("gelu", "aten.gelu.default", [hh], f"{pre}.mlp", "MLP", "gelu", 2 * seq, 4 * d)
    w4, b4 = p("mlp_c_proj_weight", d, 4 * d), p("mlp_c_proj_bias", d)
    t4 = op("t", "aten.t.default", [w4], f"{pre}.mlp.c_proj", "Linear", "mlp", 4 * d, d)
    hh = op("addmm", "aten.addmm.default", [b4, hh, t4], f"{pre}.mlp.c_proj", "Linear", "mlp", 2 * seq, d)
    return op("add", "aten.add.Tensor", [x, hh], pre, "Block", "block", 2, seq, d)


def _model_graph(n_nodes: int, gid: str, level: str, *, regions: bool, inline: bool, first_block: int = 0,
                 blocks: int | None = None, stacks, stack_ids, baseline_of=None, region_nodes=None,
                 flat: bool = False, frame: int = 0) -> Graph:
    b = _GraphBuilder(stacks, stack_ids)
    d, seq = 64, 16
    idx = b.add("idx", "placeholder", "idx", [], tensors=_t(2, seq, dtype="i64"))
    wte = b.add("p_transformer_wte_weight", "placeholder", "p_wte_weight", [], tensors=_t(50257, d))
    x = b.add("embedding", "call_function", "aten.embedding.default", [wte, idx], module="transformer.wte",
              module_type="Embedding", stack=b.stack("forward", "wte"), tensors=_t(2, seq, d))
    params: list[str] = []
    i = first_block
    while (blocks is None and len(b.nodes) < n_nodes - 6) or (blocks is not None and i < first_block + blocks):
        region = f"r{i}" if regions else None
        bg = baseline_of(i) if baseline_of else None
        x = _block(b, i, x, params, region, d, seq, inline, bg, level == "dynamo")
        i += 1
    lw = b.add("p_transformer_ln_f_weight", "placeholder", "p_ln_f_weight", [], tensors=_t(d))
    x = b.add("native_layer_norm", "call_function", "aten.native_layer_norm.default", [x, lw],
              module="transformer.ln_f", module_type="LayerNorm", stack=b.stack("forward", "head"), tensors=_t(2, seq, d))
    hw = b.add("p_lm_head_weight", "placeholder", "p_lm_head_weight", [], tensors=_t(50257, d))
    x = b.add("mm", "call_function", "aten.mm.default", [x, hw], module="lm_head", module_type="Linear",
              stack=b.stack("forward", "head"), tensors=_t(2 * seq, 50257))
    b.add("output", "output", "output", [x])
    nodes = b.nodes
    if flat:
        nodes = [Node(name=nd.name, op=nd.op, target=nd.target, inputs=nd.inputs, tensors=nd.tensors,
                      stack=nd.stack) for nd in nodes]
    # placeholders first, as FX orders them
    ph = [nd for nd in nodes if nd.op == "placeholder"]
    rest = [nd for nd in nodes if nd.op != "placeholder"]
    nodes = ph + rest
    if region_nodes is not None:
        for nd in nodes:
            if nd.region:
                region_nodes.setdefault(nd.region, []).append(nd.name)
    ops = sum(1 for nd in nodes if nd.op.startswith("call_"))
    return Graph(id=gid, level=level, frame_id=frame, compile_id=0, nodes=tuple(nodes), function="forward", op_count=ops)


def make_report(n_nodes: int = 2000, *, flat: bool = False, regions: bool = True, hostile: bool = False,
                advisor: bool = True) -> Report:
    """Build a Report whose main nonstrict ATen graph has about ``n_nodes`` nodes."""
    random.seed(0)
    stacks: list[tuple[Location, ...]] = []
    stack_ids: dict[tuple[str, int], int] = {}
    per_block = 40
    n_blocks = max(1, (n_nodes - 8) // per_block)
    third = max(1, n_blocks // 3)
    base_ids = ["0/0:aten_inference", "1/0:aten_inference", "2/0:aten_inference"]

    def baseline_of(i: int) -> str:
        return base_ids[min(2, i // third)]

    region_nodes: dict[str, list[str]] = {}
    ns_aten = _model_graph(n_nodes, "0/0:aten_inference", "aten_inference", regions=regions, inline=True,
                           stacks=stacks, stack_ids=stack_ids, baseline_of=baseline_of,
                           region_nodes=region_nodes, flat=flat)
    if hostile:  # a string constant in the graph (a node's target and value) carrying markup
        nodes = list(ns_aten.nodes)
        out = nodes[-1]
        nodes.insert(len(nodes) - 1, Node(name="hostile_const", op="get_attr", target=HOSTILE, value=HOSTILE, module="transformer"))
        nodes[-1] = Node(name=out.name, op=out.op, target=out.target, inputs=(*out.inputs, "hostile_const"))
        ns_aten = dataclasses.replace(ns_aten, nodes=tuple(nodes))
    n_real_blocks = len({nd.module.split(".")[2] for nd in ns_aten.nodes if nd.module and nd.module.startswith("transformer.h.")}) or n_blocks
    ns_dyn = _model_graph(0, "0/0:dynamo", "dynamo", regions=regions, inline=False, blocks=min(n_real_blocks, 4),
                          stacks=stacks, stack_ids=stack_ids)
    base_graphs = []
    for k in range(3):
        first = k * max(1, n_real_blocks // 3)
        cnt = max(1, min(2, n_real_blocks // 3))
        base_graphs.append(_model_graph(0, f"{k}/0:dynamo", "dynamo", regions=False, inline=False, first_block=first,
                                        blocks=cnt, stacks=stacks, stack_ids=stack_ids, frame=k))
        base_graphs.append(_model_graph(0, f"{k}/0:aten_inference", "aten_inference", regions=False, inline=False,
                                        first_block=first, blocks=cnt, stacks=stacks, stack_ids=stack_ids, frame=k))
    reason = "Call to `torch._dynamo.graph_break()`" + (HOSTILE if hostile else "")
    loc_break = Location(file=SOURCE_PATH, line=LINE["magic"], function="get_magic_num",
                         code="torch._dynamo.graph_break()")
    loc_item = Location(file=SOURCE_PATH, line=LINE["item"], function="stats", code='print("mean", x.mean().item())')
    outer = Location(file=SOURCE_PATH, line=LINE["block"], function="forward", code="x = block(x)")
    b1 = Break(gb_id="GB0025", reason=reason, count=n_real_blocks, fatal=False, location=loc_break,
               gb_type="Call to `torch._dynamo.graph_break()`", explanation="User-inserted graph break.",
               hints=("Remove the `torch._dynamo.graph_break()` call.",),
               link="https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html",
               stack=(outer, Location(file=SOURCE_PATH, line=LINE["stats_call"], function="forward", code="x = self.stats(x)"), loc_break),
               graph_before="0/0:dynamo", graph_after="1/0:dynamo")
    b2 = Break(gb_id="GB0124", reason="Unsupported Tensor.item() call with capture_scalar_outputs=False",
               count=n_real_blocks, fatal=False, location=loc_item, gb_type="Unsupported Tensor.item() call",
               hints=("Set torch._dynamo.config.capture_scalar_outputs = True.", "javascript:alert(1)"),
               link="javascript:alert(1)" if hostile else "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html",
               stack=(outer, loc_item), graph_before="1/0:dynamo", graph_after="2/0:dynamo")
    b3 = Break(gb_id="GB0007", reason="Attempted to call function marked as skipped", count=1, fatal=False,
               location=Location(file=SOURCE_PATH, line=len(SOURCE.splitlines()), function="<module>", code="out = model(...)"),
               stack=(), graph_before="2/0:dynamo")
    regions_list = []
    for rid, names in region_nodes.items():
        i = int(rid[1:])
        regions_list.append(Region(id=rid, function="Block.stats", nodes={"0/0:aten_inference": tuple(names)},
                                   file=SOURCE_PATH, line_start=LINE["item"] - 1, line_end=LINE["stats"],
                                   call_site=Location(file=SOURCE_PATH, line=LINE["stats_call"], function="forward", code="x = self.stats(x)"),
                                   call_graph="0/0:dynamo", call_node=None if i >= 4 else "flat_apply_capture"))
    marked = (MarkedFunction(spec="Block.stats", qualname="Block.stats", file=SOURCE_PATH, line_start=LINE["item"] - 1, line_end=LINE["stats"]),)
    baseline = Run(name="baseline", graphs=tuple(base_graphs), breaks=(b1, b2, b3), stdout="mean 0.1\n" * 3)
    nonstrict = Run(name="nonstrict", graphs=(ns_dyn, ns_aten), breaks=(b3,), regions=tuple(regions_list), marked=marked)
    outputs = OutputCheck(match=True, max_abs_diff=2.4e-7, max_rel_diff=1.1e-6,
                          details=(OutputDetail(path="out", match=True, max_abs_diff=2.4e-7, shape="(2, 16, 50257)", dtype="f32"),))
    cands = ()
    rec = None
    if advisor:
        cands = (
            Candidate(function="Block.stats", why="contains the break at model.py:43 (GB0124)", status="improved",
                      file=SOURCE_PATH, line=LINE["item"] - 1, run="attempt-1", breaks_before=3, breaks_after=1, outputs_match=True, elapsed_s=1.9),
            Candidate(function="get_magic_num", why="contains the break at model.py:8 (GB0025)", status="no_change",
                      file=SOURCE_PATH, line=7, run="attempt-2", breaks_before=3, breaks_after=2, outputs_match=True, elapsed_s=1.2),
            Candidate(function="GPT.forward", why="caller of Block.forward", status="rejected",
                      precheck=("defined inside the compiled region",)),
        )
        rec = Recommendation(functions=("Block.stats",), code="torch._dynamo.nonstrict_trace(Block.stats)",
                             breaks_before=3, breaks_after=1, outputs_match=True)
    title = f"synthetic GPT-like report ({len(ns_aten.nodes)} nodes)"
    return build_report(
        torch_version="2.13.0+cpu", runs={"baseline": baseline, "nonstrict": nonstrict}, title=title + (HOSTILE if hostile else ""),
        nonstrict=("Block.stats",), diff=BreakDiff(resolved=(b1, b2), remaining=(b3,), introduced=()),
        outputs=outputs, candidates=cands, recommendation=rec, stacks=tuple(stacks),
        sources={SOURCE_PATH: SourceFile(path=SOURCE_PATH, text=SOURCE + (f"# {HOSTILE}\n" if hostile else ""))},
        created="2026-11-30T12:00:00Z", nstviz_version="0.1.0", python_version="3.11.7", entry="trace_code",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nodes", type=int)
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--flat", action="store_true", help="no module paths (one flat level)")
    ap.add_argument("--no-regions", action="store_true")
    ap.add_argument("--hostile", action="store_true", help="put markup/script strings into user text")
    args = ap.parse_args()
    r = make_report(args.nodes, flat=args.flat, regions=not args.no_regions, hostile=args.hostile)
    text = r.to_json()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        main_graph = r.runs["nonstrict"].graphs[-1]
        print(f"wrote {args.output}: {len(main_graph.nodes)} nodes in the main graph, {len(text) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
