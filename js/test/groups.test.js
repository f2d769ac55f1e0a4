import assert from "node:assert/strict";
import { test } from "node:test";
import { buildGraphModel } from "../src/contract/graphmodel.js";
import { buildGroupTree, initialExpansion, revealNode, ROOT } from "../src/layout/groups.js";
import { searchNodes } from "../src/interaction/search.js";
import { computeView } from "../src/layout/view.js";
import { chain, graph } from "./fixtures.js";

function model() {
  return buildGraphModel(graph([
    ["x", "placeholder"],
    ["w0", "placeholder"],
    ["t0", "call_function", ["w0"], { module: "blocks.0.attn", module_type: "Attention", target: "aten.t.default" }],
    ["mm0", "call_function", ["x", "t0"], { module: "blocks.0.attn", target: "aten.mm.default" }],
    ["s0", "call_function", ["mm0"], { module: "blocks.0", module_type: "Block", region: "r0", target: "aten.sin.default" }],
    ["c0", "call_function", ["s0"], { module: "blocks.0", region: "r0", target: "aten.cos.default" }],
    ["mm1", "call_function", ["c0"], { module: "blocks.1.attn", target: "aten.mm.default" }],
    ["output", "output", ["mm1"]],
  ]));
}

test("groups follow module paths; regions are groups inside their module", () => {
  const gm = model();
  const tree = buildGroupTree(gm);
  const byKey = (k) => tree.groups.find((g) => !g.dead && g.key === k);
  const b0 = byKey("blocks.0");
  assert.ok(b0, "blocks.0 group");
  assert.equal(b0.moduleType, "Block");
  const region = tree.groups.find((g) => g.kind === "region");
  assert.equal(region.parent, b0.id);
  assert.deepEqual(region.children.map((i) => gm.nodes[i].name), ["s0", "c0"]);
  assert.equal(b0.regionCount, 2);
  assert.equal(tree.groups[ROOT].leafCount, gm.n);
});

test("a parameter used only inside a module joins that module's group", () => {
  const gm = model();
  const tree = buildGroupTree(gm);
  const w0 = gm.byName.get("w0");
  assert.equal(tree.groups[tree.leafGroup[w0]].key, "blocks.0.attn");
  assert.equal(tree.leafGroup[gm.byName.get("x")], tree.groups.find((g) => g.key === "blocks.0.attn").id);
});

test("single-child module chains are merged into one group", () => {
  const gm = buildGraphModel(graph([["x", "placeholder"], ["a", "call_function", ["x"], { module: "model.encoder.layer" }], ["output", "output", ["a"]]]));
  const tree = buildGroupTree(gm);
  const alive = tree.groups.filter((g) => !g.dead && g.kind === "module");
  assert.equal(alive.length, 1);
  assert.equal(alive[0].label, "model.encoder.layer");
});

test("very wide levels are split into chunks of consecutive nodes", () => {
  const gm = buildGraphModel(chain(5000));
  const tree = buildGroupTree(gm, { chunkLimit: 1000, chunkSize: 400 });
  const root = tree.groups[ROOT];
  assert.ok(root.items.length <= 1000);
  const chunks = tree.groups.filter((g) => g.kind === "chunk");
  assert.equal(chunks.length, Math.ceil(5002 / 400));
  assert.equal(chunks.reduce((s, g) => s + g.leafCount, 0), gm.n);
});

test("initial expansion stays within the budget; reveal expands ancestors", () => {
  const gm = buildGraphModel(chain(400, 40));
  const tree = buildGroupTree(gm);
  const ex = initialExpansion(tree, 60);
  let visible = 0;
  const count = (gid) => { for (const it of tree.groups[gid].items) { if (it >= 0) visible++; else if (ex.has(-it - 1)) count(-it - 1); else visible++; } };
  count(ROOT);
  assert.ok(visible <= 60, `visible ${visible}`);
  const i = gm.byName.get("a399");
  const changed = revealNode(tree, ex, i);
  assert.equal(changed, true);
  let g = tree.leafGroup[i];
  while (g >= 0) { assert.ok(ex.has(g)); g = tree.groups[g].parent; }
});

test("search by name, op, target and module, with field prefixes", () => {
  const gm = model();
  const names = (q) => searchNodes(gm, q).map((i) => gm.nodes[i].name);
  assert.deepEqual(names("mm0"), ["mm0"]);
  assert.deepEqual(names("aten.mm"), ["mm0", "mm1"]);
  assert.deepEqual(names("blocks.1"), ["mm1"]);
  assert.deepEqual(names("op:placeholder"), ["x", "w0"]);
  assert.deepEqual(names("module:blocks.0 target:cos"), ["c0"]);
  assert.deepEqual(names("region:r0"), ["s0", "c0"]);
  assert.deepEqual(names("  "), []);
  assert.deepEqual(names("nothing-like-this"), []);
});

test("search over 50,000 nodes finds every match (timings: benchmarks/bench_viewer.py)", () => {
  const gm = buildGraphModel(chain(50000, 50));
  const hits = searchNodes(gm, "a4999");
  assert.deepEqual(hits.map((i) => gm.nodes[i].name), ["a4999", "a49990", "a49991", "a49992", "a49993", "a49994", "a49995", "a49996", "a49997", "a49998", "a49999"]);
});

test("backward nodes borrow the module of the forward node with the same seq_nr", async () => {
  const { inferModulesFromForward } = await import("../src/contract/graphmodel.js");
  const fwd = graph([["x", "placeholder"], ["mm", "call_function", ["x"], { module: "blocks.0.attn", extra: { seq_nr: "7" } }], ["output", "output", ["mm"]]]);
  const bwd = buildGraphModel(graph([["g", "placeholder"], ["mm_b", "call_function", ["g"], { extra: { seq_nr: "7" } }], ["z", "call_function", ["mm_b"], { extra: { seq_nr: "99" } }], ["output", "output", ["z"]]]));
  assert.equal(inferModulesFromForward(bwd, fwd), 1);
  assert.equal(bwd.module[1], "blocks.0.attn");
  assert.equal(bwd.moduleInferred[1], 1);
  const tree = buildGroupTree(bwd);
  assert.equal(tree.groups[tree.leafGroup[1]].key, "blocks.0.attn");
  assert.equal(bwd.nodes[1].module, undefined); // the Report itself is not changed
});

test("corresponding nodes across graphs: same target and same user stack", async () => {
  const { correspondingNodes } = await import("../src/ui/app.js");
  const a = buildGraphModel(graph([["x", "placeholder"], ["mm", "call_function", ["x"], { target: "aten.mm.default", stack: 3 }], ["output", "output", ["mm"]]]));
  const b = buildGraphModel(graph([["y", "placeholder"], ["mm_1", "call_function", ["y"], { target: "aten.mm.default", stack: 3 }],
    ["mm_2", "call_function", ["mm_1"], { target: "aten.mm.default", stack: 4 }], ["add", "call_function", ["mm_2"], { target: "aten.add.Tensor", stack: 3 }], ["output", "output", ["add"]]]));
  assert.deepEqual(correspondingNodes(a, 1, b).map((j) => b.nodes[j].name), ["mm_1"]);
  assert.deepEqual(correspondingNodes(a, 0, b), []); // no stack: no guess
});

test("a module called twice with work in between gets one group per call (no cycle)", async () => {
  const gm = buildGraphModel(graph([
    ["x", "placeholder"],
    ["a", "call_function", ["x"], { module: "blk.lin", module_type: "Linear" }],
    ["s", "call_function", ["a"], { module: "blk", region: "r0" }],
    ["b", "call_function", ["s"], { module: "blk.lin", module_type: "Linear" }],
    ["c", "call_function", ["b"], { module: "blk.lin" }],
    ["output", "output", ["c"]],
  ]));
  const tree = buildGroupTree(gm);
  const g = (name) => tree.groups[tree.leafGroup[gm.byName.get(name)]];
  assert.equal(g("a").key, "blk.lin");
  assert.equal(g("b").key, "blk.lin#2");
  assert.equal(g("b"), g("c"));
  assert.equal(g("b").label, "lin (call 2)");
  assert.equal(g("b").moduleType, "Linear");
  // every edge between the boxes of blk goes forward: no back edge, so nothing is drawn upward
  const all = new Set(tree.groups.filter((x) => !x.dead).map((x) => x.id));
  const v = computeView(gm, tree, all);
  for (const e of v.edges) assert.ok(e.pts[e.pts.length - 1] > e.pts[1], "edge points down");
});

test("module-less gradient sums chain the blocks they connect (backward graphs)", () => {
  // b1 -> s1 (no module; users: b0 and s2) -> b0 ; s1 -> s2 (no module, user: output only)
  const gm = buildGraphModel(graph([
    ["g", "placeholder"],
    ["b1", "call_function", ["g"], { module: "h.1" }],
    ["s1", "call_function", ["b1", "g"]],
    ["b0", "call_function", ["s1"], { module: "h.0" }],
    ["s2", "call_function", ["s1", "b0"]],
    ["output", "output", ["s2"]],
  ]));
  const tree = buildGroupTree(gm);
  const key = (name) => tree.groups[tree.leafGroup[gm.byName.get(name)]].key;
  assert.equal(key("s1"), "h.0"); // with its user that has a module, not above the blocks
  const v = computeView(gm, tree, new Set([0]));
  assert.ok(v.edges.every((e) => e.pts[e.pts.length - 1] > e.pts[1]), "all edges point down");
});
