import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { buildGraphModel } from "../src/contract/graphmodel.js";
import { ReportIndex } from "../src/contract/decode.js";
import { breakBetween, fixStackTree, stackGraph, widenBands } from "../src/contract/stack.js";
import { buildGroupTree, initialExpansion } from "../src/layout/groups.js";
import { computeView } from "../src/layout/view.js";

const fixture = JSON.parse(readFileSync(new URL("../../tests/fixtures/module_block_break.report.json", import.meta.url), "utf8"));

test("the baseline's fragments stack in order, a band between two, each band above its next fragment", async () => {
  const index = new ReportIndex(fixture);
  const { bandLines } = await import("../src/ui/diffview.js");
  const g = stackGraph(index, "baseline", "stack:dynamo", (bi, a, b) => bandLines(index, "baseline", bi, b));
  const frags = index.graphs("baseline").filter((x) => x.level === "dynamo");
  assert.deepEqual(g.stacked.fragments.map((f) => f.graph), frags.map((x) => x.id));
  assert.equal(g.stacked.bands.length, frags.length - 1);
  // the one recorded break (by graph_before/after, a's split compile, or resumed after it), and
  // the second Block's forward: a recompile (requires_grad changed), no break of its own
  assert.deepEqual(g.stacked.bands.map((b) => b.breakIndex), [0, 0, -1, 0]);
  const third = g.nodes.find((n) => n.band && n.band.k === 3).band.lines;
  assert.deepEqual(third, ["recompile of forward (no graph break)", "1/0: tensor 'x' requires_grad mismatch. expected requires_grad=0"]);
  assert.equal(g.nodes.length, frags.reduce((s, x) => s + x.nodes.length, 0) + frags.length - 1);
  const gm = buildGraphModel(g);
  const tree = buildGroupTree(gm);
  fixStackTree(gm, tree);
  // the top level: fragment, band, fragment, ... and nothing else
  const top = tree.groups[0].items;
  assert.equal(top.length, 2 * frags.length - 1);
  top.forEach((it, k) => assert.equal(it >= 0, k % 2 === 1, `item ${k}`));
  assert.equal(tree.groups[-top[0] - 1].label, `${frags[0].id} · ${frags[0].function}`);
  const view = computeView(gm, tree, initialExpansion(tree));
  widenBands(view, gm);
  const y = (item) => view.boxes[view.boxOf.get(item)].y;
  const ys = top.map((it) => y(it >= 0 ? it : gm.n - it - 1));
  assert.deepEqual([...ys].sort((a, b) => a - b), ys, "stacked top to bottom in execution order");
  const band = view.boxes[view.boxOf.get(top[1])];
  assert.equal(band.x, 0);
  assert.equal(band.w, view.width);
});

test("a run with one graph at a level has nothing to stack; no break is guessed for a new frame", () => {
  const index = new ReportIndex(fixture);
  assert.equal(stackGraph(index, "nonstrict", "stack:dynamo", () => ["", ""]), null);
  assert.equal(stackGraph(index, "baseline", "0/0:dynamo", () => ["", ""]), null);
  const a = { id: "7/0:dynamo", level: "dynamo", frame_id: 7, compile_id: 0, function: "f", nodes: [] };
  const b = { id: "8/0:dynamo", level: "dynamo", frame_id: 8, compile_id: 0, function: "g", nodes: [] };
  assert.equal(breakBetween(index, "baseline", a, b, 0), -1, "not a resume function: no break is guessed");
});

test("backward graphs are not stacked (they run in the reverse order, no break stands between them)", () => {
  const training = JSON.parse(readFileSync(new URL("../../tests/fixtures/training_step.report.json", import.meta.url), "utf8"));
  const index = new ReportIndex(training);
  assert.ok(index.graphs("baseline").filter((g) => g.level === "aten_backward").length > 1);
  assert.equal(stackGraph(index, "baseline", "stack:aten_backward", () => ["", ""]), null);
  const s = stackGraph(index, "baseline", "stack:aten_forward", () => ["", ""]);
  // the step resumes after the forward's break; the backward() break ends the last graph, not before it
  assert.deepEqual(s.stacked.bands.map((b) => b.breakIndex), [0, 0, 0]);
});

test("a band with no break: a recompile says so with its reason, else 'next frame'", async () => {
  const { bandLines } = await import("../src/ui/diffview.js");
  const g = (id, frame, compile) => ({ id, level: "dynamo", frame_id: frame, compile_id: compile, function: "f", nodes: [{ name: "x", op: "placeholder", inputs: [] }, { name: "output", op: "output", inputs: ["x"] }] });
  const r = { runs: { baseline: { graphs: [g("0/0:dynamo", 0, 0), g("0/1:dynamo", 0, 1), g("2/0:dynamo", 2, 0)], breaks: [],
    compiles: [{ frame_id: 0, compile_id: 1, function: "f", recompile_reason: "size mismatch at index 0. expected 2, actual 3\nmore" }] } } };
  const index = new ReportIndex(r);
  const s = stackGraph(index, "baseline", "stack:dynamo", (bi, a, b) => bandLines(index, "baseline", bi, b));
  assert.deepEqual(s.nodes.filter((n) => n.band).map((n) => n.band.lines), [
    ["recompile of f (no graph break)", "size mismatch at index 0. expected 2, actual 3"],
    ["next frame", "no recorded graph break names these two graphs"],
  ]);
});
