// Big graphs are modelled, grouped and folded in slices: the same result as in one go.
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildGraphModel, buildGraphModelSliced } from "../src/contract/graphmodel.js";
import { buildGroupTree, buildGroupTreeSliced, foldTree, foldTreeSliced } from "../src/layout/groups.js";
import { graph } from "./fixtures.js";

/** `k` blocks of a few ops each, under transformer.h.<i>, so that folding has work to do. */
function blocks(k) {
  const t = { tensors: [{ shape: [2, 8], dtype: "f32" }] };
  const spec = [["x", "placeholder", [], t]];
  let prev = "x";
  for (let i = 0; i < k; i++) {
    const m = `transformer.h.${i}`;
    spec.push([`w${i}`, "placeholder", [], { ...t, module: `${m}.mlp` }],
      [`ln${i}`, "call_function", [prev], { ...t, module: `${m}.ln_1`, module_type: "LayerNorm", target: "aten.native_layer_norm.default" }],
      [`mm${i}`, "call_function", [`ln${i}`, `w${i}`], { ...t, module: `${m}.mlp`, module_type: "MLP", target: "aten.mm.default" }],
      [`add${i}`, "call_function", [prev, `mm${i}`], { ...t, module: m, module_type: "Block", target: "aten.add.Tensor" }]);
    prev = `add${i}`;
  }
  spec.push(["output", "output", [prev]]);
  return graph(spec);
}

const shape = (tree) => tree.groups.map((g) => [g.key, g.label, g.kind, g.parent, g.depth, g.dead || false, g.items, g.leafCount]);

test("sliced model, tree and fold equal the one-go ones, and really pause", async () => {
  const g = blocks(3000); // 12k nodes
  let pauses = 0;
  const pause = () => { pauses++; return Promise.resolve(); };
  const gm = buildGraphModel(g);
  const gms = await buildGraphModelSliced(g, pause, 0); // a slice of 0 ms: pause at every check
  for (const k of ["n", "labels", "edgeCount"]) assert.deepEqual(gms[k], gm[k], k);
  for (const k of ["kind", "inStart", "inIdx", "outStart", "outIdx", "region"]) assert.deepEqual([...gms[k]], [...gm[k]], k);
  const modelPauses = pauses;
  assert.ok(modelPauses >= 5, `the model paused ${modelPauses} times`);
  const tree = foldTree(gm, buildGroupTree(gm, { fold: false }));
  const slicedTree = await foldTreeSliced(gms, await buildGroupTreeSliced(gms, { fold: false }, pause, 0), pause, 0);
  assert.ok(pauses - modelPauses >= 10, `the tree and fold paused ${pauses - modelPauses} times`);
  assert.deepEqual(shape(slicedTree), shape(tree));
  assert.ok(tree.groups.some((x) => x.kind === "series"), "the blocks fold into a series");
  assert.deepEqual([...slicedTree.leafGroup], [...tree.leafGroup]);
});

test("search text built a part at a time equals the one-go text, and searchText finishes it", async () => {
  const { searchText, searchTextUntil } = await import("../src/contract/graphmodel.js");
  const whole = searchText(buildGraphModel(blocks(300)));
  const gm = buildGraphModel(blocks(300));
  let calls = 0;
  assert.equal(searchTextUntil(gm, () => ++calls > 1), false); // time is up after the first part
  assert.equal(gm.search, null);
  assert.ok(gm._searchNext > 0 && gm._searchNext < gm.n);
  assert.deepEqual(searchText(gm), whole);
  assert.equal(searchTextUntil(gm, () => true), true);
});
