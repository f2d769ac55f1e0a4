// Property-style tests: random graphs (dangling and forward references, self loops, duplicate
// inputs, random module paths and regions) never break grouping, layout or search.
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildGraphModel } from "../src/contract/graphmodel.js";
import { buildGroupTree, initialExpansion, revealNode } from "../src/layout/groups.js";
import { computeView } from "../src/layout/view.js";
import { searchNodes } from "../src/interaction/search.js";

function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function randomGraph(seed) {
  const r = rng(seed);
  const n = 1 + Math.floor(r() * 300);
  const mods = ["", "a", "a.b", "a.b.c", "a.0", "a.1.x", "z", "k.l.m.n.o"];
  const ops = ["placeholder", "call_function", "call_method", "get_attr", "call_module"];
  const nodes = [];
  for (let i = 0; i < n; i++) {
    const inputs = [];
    const k = Math.floor(r() * 4);
    for (let j = 0; j < k; j++) {
      const t = r();
      if (t < 0.8 && i > 0) inputs.push(`n${Math.floor(r() * i)}`);
      else if (t < 0.9) inputs.push(`n${Math.floor(r() * n)}`); // forward reference or self
      else inputs.push("missing");
    }
    const m = mods[Math.floor(r() * mods.length)];
    nodes.push({
      name: `n${i}`, op: i === n - 1 ? "output" : ops[Math.floor(r() * ops.length)], target: r() < 0.5 ? "aten.mm.default" : `t${i}`,
      inputs, region: r() < 0.1 ? `r${Math.floor(r() * 3)}` : null, module: m || null,
      nonstrict_call: r() < 0.02, baseline_graph: r() < 0.5 ? `b${Math.floor(r() * 3)}` : null,
      tensors: r() < 0.5 ? [{ shape: [2, "s0"], dtype: "f32", device: "cpu" }] : [],
    });
  }
  return { id: "g", level: "aten_forward", frame_id: 0, compile_id: 0, nodes };
}

test("random graphs: every node is placed exactly once, all coordinates finite", () => {
  for (let seed = 1; seed <= 150; seed++) {
    const gm = buildGraphModel(randomGraph(seed));
    const tree = buildGroupTree(gm, { chunkLimit: 40, chunkSize: 16 });
    let total = 0;
    for (const g of tree.groups) if (!g.dead) total += g.children.length;
    assert.equal(total, gm.n, `seed ${seed}: leaves`);
    for (const expanded of [initialExpansion(tree, 30), new Set(tree.groups.filter((g) => !g.dead).map((g) => g.id))]) {
      const v = computeView(gm, tree, expanded);
      for (const b of v.boxes) assert.ok([b.x, b.y, b.w, b.h].every(Number.isFinite), `seed ${seed}: box`);
      for (const e of v.edges) assert.ok(e.pts.every(Number.isFinite), `seed ${seed}: edge`);
      for (let i = 0; i < gm.n; i++) assert.ok(v.boxOf.has(v.itemOf[i]), `seed ${seed}: node ${i} has a box`);
    }
    const ex = initialExpansion(tree, 10);
    const last = gm.n - 1;
    revealNode(tree, ex, last);
    const v = computeView(gm, tree, ex);
    assert.equal(v.itemOf[last], last, `seed ${seed}: revealed node drawn as itself`);
    assert.ok(Array.isArray(searchNodes(gm, "n1 module:a")));
  }
});
