import assert from "node:assert/strict";
import { test } from "node:test";
import { buildGraphModel } from "../src/contract/graphmodel.js";
import { isotonic, layeredLayout } from "../src/layout/layered.js";
import { computeView } from "../src/layout/view.js";
import { buildGroupTree, ROOT } from "../src/layout/groups.js";
import { chain, graph } from "./fixtures.js";

function overlaps(boxes) {
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5) return [a, b];
    }
  }
  return null;
}

test("edges point down: every edge goes to a lower layer", () => {
  const edges = [0, 1, 1, 2, 0, 2, 2, 3, 1, 3];
  const r = layeredLayout({ count: 4, w: [50, 50, 50, 50], h: [30, 30, 30, 30], edges });
  for (let k = 0; k < edges.length; k += 2) assert.ok(r.y[edges[k]] < r.y[edges[k + 1]]);
  assert.deepEqual(Array.from(r.layer), [0, 1, 2, 3]);
});

test("inputs are placed just above their first consumer (not all in layer 0)", () => {
  // 0 -> 1 -> 2 -> 4 ; 3 (a weight) -> 4
  const r = layeredLayout({ count: 5, w: [40, 40, 40, 40, 40], h: [30, 30, 30, 30, 30], edges: [0, 1, 1, 2, 2, 4, 3, 4] });
  assert.equal(r.layer[3], 2);
  assert.equal(r.layer[4], 3);
});

test("long edges get bend points, one per skipped layer", () => {
  const r = layeredLayout({ count: 4, w: [40, 40, 40, 40], h: [30, 30, 30, 30], edges: [0, 1, 1, 2, 2, 3, 0, 3] });
  assert.equal(r.routes[3].length, 2 * 2 * 2); // 2 dummy layers, 2 points each
  assert.equal(r.routes[0], null);
});

test("boxes of one layer never overlap", () => {
  const n = 60;
  const edges = [];
  for (let i = 1; i < n; i++) edges.push(0, i);
  const w = Array.from({ length: n }, (_, i) => 30 + (i % 7) * 10);
  const h = new Array(n).fill(30);
  const r = layeredLayout({ count: n, w, h, edges });
  const boxes = Array.from({ length: n }, (_, i) => ({ x: r.x[i] - w[i] / 2, y: r.y[i] - 15, w: w[i], h: 30 }));
  assert.equal(overlaps(boxes), null);
});

test("isotonic keeps order and gaps with minimal movement", () => {
  const x = new Float64Array(3);
  isotonic([0, 1, 2], [0, 0, 0], [10, 10, 10], 5, x);
  assert.deepEqual(Array.from(x), [-15, 0, 15]);
  isotonic([0, 1, 2], [0, 100, 200], [10, 10, 10], 5, x);
  assert.deepEqual(Array.from(x), [0, 100, 200]);
});

test("edges against node order (cycles between groups) do not break the layout", () => {
  const r = layeredLayout({ count: 3, w: [40, 40, 40], h: [30, 30, 30], edges: [0, 1, 1, 2, 2, 0] });
  assert.ok(Number.isFinite(r.width) && Number.isFinite(r.height));
});

test("a 20,000-node chain with skips lays out (timings: benchmarks/bench_viewer_layout.mjs)", () => {
  const n = 20000;
  const edges = [];
  for (let i = 1; i < n; i++) { edges.push(i - 1, i); if (i % 10 === 0 && i >= 30) edges.push(i - 30, i); }
  const w = new Float64Array(n).fill(80), h = new Float64Array(n).fill(30);
  const r = layeredLayout({ count: n, w, h, edges });
  assert.equal(r.layers, n);
  for (let i = 1; i < n; i++) assert.ok(r.y[i] > r.y[i - 1]);
});

test("computeView: nested groups contain their children, no sibling overlaps", () => {
  const gm = buildGraphModel(chain(40, 4));
  const tree = buildGroupTree(gm);
  const all = new Set(tree.groups.filter((g) => !g.dead).map((g) => g.id));
  const v = computeView(gm, tree, all);
  assert.equal(v.boxes.filter((b) => b.item < gm.n).length, gm.n);
  const groupBoxes = v.boxes.filter((b) => b.item >= gm.n);
  for (const gb of groupBoxes) {
    const g = tree.groups[gb.item - gm.n];
    for (const i of g.children) {
      const b = v.boxes[v.boxOf.get(i)];
      assert.ok(b.x >= gb.x - 0.01 && b.x + b.w <= gb.x + gb.w + 0.01 && b.y >= gb.y - 0.01 && b.y + b.h <= gb.y + gb.h + 0.01, `${gm.nodes[i].name} outside ${g.label}`);
    }
  }
  const top = v.boxes.filter((b) => (b.item < gm.n ? tree.leafGroup[b.item] === ROOT : tree.groups[b.item - gm.n].parent === ROOT));
  assert.equal(overlaps(top), null);
});

test("computeView: collapsed groups stand for their nodes; edges are merged", () => {
  const gm = buildGraphModel(chain(40, 4));
  const tree = buildGroupTree(gm);
  const v = computeView(gm, tree, new Set([ROOT]));
  // the input joins its only consumer's group: "layers" (collapsed) and the output remain
  assert.equal(v.boxes.length, 2);
  const layers = tree.groups.find((g) => g.label === "layers");
  for (let i = 0; i <= 40; i++) assert.equal(v.itemOf[i], gm.n + layers.id);
  assert.equal(v.edges.length, 1);
  assert.equal(v.edges[0].count, 1);
});

test("graph model: kinds, labels, dedup of repeated inputs", () => {
  const gm = buildGraphModel(graph([
    ["x", "placeholder"], ["w", "get_attr"], ["m", "call_function", ["x", "x", "w"], { target: "torch.ops.aten.mul.Tensor" }],
    ["fa", "call_function", ["m"], { nonstrict_call: true, target: "flat_apply" }], ["output", "output", ["fa"]],
  ]));
  assert.deepEqual(Array.from(gm.kind), [0, 3, 2, 4, 1]);
  assert.equal(gm.labels[2], "mul.Tensor");
  assert.equal(gm.inStart[3] - gm.inStart[2], 2);
  assert.equal(gm.edgeCount, 4);
});

test("box order that is not topological (hoisted inputs) is still laid out top-down", async () => {
  const { topoPositions } = await import("../src/layout/layered.js");
  // box 0 is a group fed by box 1 (an input that comes later in the box order)
  const edges = [1, 0, 0, 2];
  const pos = topoPositions(3, edges);
  assert.ok(pos[1] < pos[0] && pos[0] < pos[2]);
  const r = layeredLayout({ count: 3, w: [100, 40, 40], h: [200, 30, 30], edges });
  assert.ok(r.y[1] < r.y[0] && r.y[0] < r.y[2]);
  // a real cycle still terminates, every box placed once
  const cyc = topoPositions(3, [0, 1, 1, 2, 2, 0]);
  assert.deepEqual([...cyc].sort(), [0, 1, 2]);
});

test("short labels for ATen overloads and Python callables", async () => {
  const { shortTarget } = await import("../src/contract/graphmodel.js");
  assert.equal(shortTarget("call_function", "torch.ops.aten.mm.default", "mm"), "mm");
  assert.equal(shortTarget("call_function", "aten.add.Tensor", "add"), "add.Tensor");
  assert.equal(shortTarget("call_function", "torch._C._nn.linear", "x"), "linear");
  assert.equal(shortTarget("call_function", "torch.nn.functional.relu", "x"), "relu");
  assert.equal(shortTarget("call_function", "<built-in function add>", "x"), "add");
  assert.equal(shortTarget("call_function", "_operator.getitem", "x"), "getitem");
  assert.equal(shortTarget("placeholder", "x", "l_x_"), "l_x_");
  assert.equal(shortTarget("call_module", "blocks.0.attn", "m"), "blocks.0.attn");
});
test("module targets keep their path", async () => { const { shortTarget } = await import("../src/contract/graphmodel.js"); assert.equal(shortTarget("call_module", "model.encoder.layer", "m"), "model.encoder.layer"); });

test("computeViewAsync gives the same geometry as computeView", async () => {
  const { computeViewAsync } = await import("../src/layout/view.js");
  const gm = buildGraphModel(chain(3000, 30));
  const tree = buildGroupTree(gm);
  const all = new Set(tree.groups.filter((g) => !g.dead).map((g) => g.id));
  const a = computeView(gm, tree, all);
  const b = await computeViewAsync(gm, tree, all, {}, 0);
  assert.deepEqual(b.boxes, a.boxes);
  assert.deepEqual(b.edges.map((e) => e.pts), a.edges.map((e) => e.pts));
  assert.equal(await computeViewAsync(gm, tree, all, {}, 0, () => true), null);
});
