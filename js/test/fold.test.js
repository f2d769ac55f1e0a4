import assert from "node:assert/strict";
import { test } from "node:test";
import { buildGraphModel } from "../src/contract/graphmodel.js";
import { buildGroupTree, initialExpansion, revealNode, ROOT } from "../src/layout/groups.js";
import { structuralSignature } from "../src/layout/fold.js";
import { computeView } from "../src/layout/view.js";
import { graph } from "./fixtures.js";

/** A stack of `k` blocks h.0 … h.k-1 (ln -> mm -> add residual); `tweak(i, spec)` may change block i. */
function stack(k, tweak = () => {}) {
  const spec = [["x", "placeholder", [], { tensors: [{ shape: [2, 8], dtype: "f32" }] }],
    ["emb", "call_function", ["x"], { module: "transformer.wte", target: "aten.embedding.default", tensors: [{ shape: [2, 8], dtype: "f32" }] }]];
  let prev = "emb";
  for (let i = 0; i < k; i++) {
    const m = `transformer.h.${i}`;
    const t = { tensors: [{ shape: [2, 8], dtype: "f32" }] };
    const block = [
      [`w${i}`, "placeholder", [], { ...t, module: `${m}.mlp` }],
      [`ln${i}`, "call_function", [prev], { ...t, module: `${m}.ln_1`, module_type: "LayerNorm", target: "aten.native_layer_norm.default" }],
      [`mm${i}`, "call_function", [`ln${i}`, `w${i}`], { ...t, module: `${m}.mlp`, module_type: "MLP", target: "aten.mm.default" }],
      [`add${i}`, "call_function", [prev, `mm${i}`], { ...t, module: m, module_type: "Block", target: "aten.add.Tensor" }],
    ];
    tweak(i, block);
    spec.push(...block);
    prev = `add${i}`;
  }
  spec.push(["out", "call_function", [prev], { module: "lm_head", target: "aten.mm.default" }], ["output", "output", ["out"]]);
  return buildGraphModel(graph(spec));
}

const alive = (tree) => tree.groups.filter((g) => !g.dead);
const visibleBoxes = (gm, tree, ex) => computeView(gm, tree, ex).boxes.filter((b) => b.item < gm.n || !ex.has(b.item - gm.n)).length;

test("identical blocks get one signature; names, indices and inputs from outside do not count", () => {
  const gm = stack(4);
  const tree = buildGroupTree(gm, { fold: false });
  const blocks = alive(tree).filter((g) => /^\d+$/.test(g.label));
  assert.equal(blocks.length, 4);
  const sigs = new Set(blocks.map((g) => structuralSignature(gm, tree, g.id)));
  assert.equal(sigs.size, 1);
});

test("a different op, tensor type, edge or non-strict inlining changes the signature", () => {
  const variants = {
    op: (i, b) => { if (i === 2) b[2][3].target = "aten.bmm.default"; },
    dtype: (i, b) => { if (i === 2) b[2][3].tensors = [{ shape: [2, 8], dtype: "bf16" }]; },
    edge: (i, b) => { if (i === 2) b[3][2] = [b[2][0], b[2][0]]; }, // add(mm, mm) instead of add(x, mm)
    region: (i, b) => { if (i === 2) b[2][3].region = "r0"; },
    // merged view: every block's ln and mm in graph A_i, its add in B_i; block 2 breaks before mm
    baseline: (i, b) => { b[1][3].baseline_graph = `A${i}`; b[2][3].baseline_graph = i === 2 ? `B${i}` : `A${i}`; b[3][3].baseline_graph = `B${i}`; },
  };
  for (const [what, tweak] of Object.entries(variants)) {
    const gm = stack(4, tweak);
    const tree = buildGroupTree(gm, { fold: false });
    const sig = (label) => structuralSignature(gm, tree, alive(tree).find((g) => g.label === label).id);
    assert.equal(sig("1"), sig("3"), what);
    assert.notEqual(sig("1"), sig("2"), what);
  }
});

test("a run of identical blocks folds into one series with the count and index range", () => {
  const gm = stack(6);
  const tree = buildGroupTree(gm);
  const series = alive(tree).filter((g) => g.kind === "series");
  assert.equal(series.length, 1);
  const s = series[0];
  assert.equal(s.label, "h[0–5] ×6");
  assert.equal(s.count, 6);
  assert.equal(s.groupChildren.length, 6);
  assert.equal(s.leafCount, 6 * 4);
  for (const c of s.groupChildren) assert.equal(tree.groups[c].parent, s.id);
  // nothing is lost: every node still has one group, under the series for the blocks
  let total = 0;
  for (const g of alive(tree)) total += g.children.length;
  assert.equal(total, gm.n);
  assert.equal(tree.groups[ROOT].leafCount, gm.n);
});

test("a block that differs splits the run; the series never holds it", () => {
  const gm = stack(8, (i, b) => { if (i === 3) b[2][3].target = "aten.bmm.default"; });
  const tree = buildGroupTree(gm);
  const labels = alive(tree).filter((g) => g.kind === "series").map((g) => g.label);
  assert.deepEqual(labels, ["h[0–2] ×3", "h[4–7] ×4"]);
  const h = alive(tree).find((g) => g.label === "h");
  assert.deepEqual(h.items.map((it) => tree.groups[-it - 1].label), ["h[0–2] ×3", "3", "h[4–7] ×4"]);
});

test("the series stays collapsed at first; expanding it shows each block, each expandable", () => {
  const gm = stack(16);
  const tree = buildGroupTree(gm);
  const s = alive(tree).find((g) => g.kind === "series");
  const ex = initialExpansion(tree);
  assert.ok(!ex.has(s.id), "folded at first");
  const before = visibleBoxes(gm, tree, ex);
  const flat = buildGroupTree(gm, { fold: false });
  const flatBoxes = visibleBoxes(gm, flat, initialExpansion(flat));
  assert.ok(before < flatBoxes, `${before} boxes folded vs ${flatBoxes} unfolded`);
  ex.add(s.id);
  const v = computeView(gm, tree, ex);
  const shownBlocks = v.boxes.filter((b) => b.item >= gm.n && tree.groups[b.item - gm.n].parent === s.id);
  assert.equal(shownBlocks.length, 16);
  // revealing a node inside block 9 opens the series and the block
  const i = gm.byName.get("mm9");
  revealNode(tree, ex, i);
  assert.ok(ex.has(s.id));
  assert.ok(computeView(gm, tree, ex).boxOf.has(i));
});

test("fewer than three blocks are not folded", () => {
  const tree = buildGroupTree(stack(2));
  assert.equal(alive(tree).filter((g) => g.kind === "series").length, 0);
});

test("folding as a step of its own gives the same tree as building with folding", async () => {
  const { foldTree } = await import("../src/layout/groups.js");
  const gm = stack(9, (i, b) => { if (i === 4) b[2][3].target = "aten.bmm.default"; });
  const one = buildGroupTree(gm);
  const two = foldTree(gm, buildGroupTree(gm, { fold: false }));
  const shape = (t) => t.groups.filter((g) => !g.dead).map((g) => [g.key, g.label, g.parent, g.depth, g.items.join(",")]);
  assert.deepEqual(shape(two), shape(one));
});
