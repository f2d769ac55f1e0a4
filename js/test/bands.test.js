import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";
import { buildGraphModel, inferModulesFromForward } from "../src/contract/graphmodel.js";
import { buildGroupTree, initialExpansion } from "../src/layout/groups.js";
import { computeView, HEADER, PAD } from "../src/layout/view.js";

// a real GPT-2 training step (4 blocks): tests/fixtures/make_gpt2_fixture.py
const report = JSON.parse(gunzipSync(readFileSync(new URL("../../tests/fixtures/gpt2_4layer.report.json.gz", import.meta.url))).toString("utf8"));

function backward() {
  const graphs = report.runs.baseline.graphs;
  const g = graphs.filter((x) => x.level === "aten_backward").sort((a, b) => b.nodes.length - a.nodes.length)[0];
  const gm = buildGraphModel(g);
  inferModulesFromForward(gm, graphs.find((x) => x.level === "aten_forward" && x.frame_id === g.frame_id && x.compile_id === g.compile_id));
  return gm;
}

/** Tallest horizontal band inside an expanded group (header to bottom padding) that no child box reaches into. */
function emptiestBand(gm, tree, expanded) {
  const v = computeView(gm, tree, expanded);
  const kids = new Map();
  for (const b of v.boxes) {
    const parent = b.item < v.n ? tree.leafGroup[b.item] : tree.groups[b.item - v.n].parent;
    if (parent < 0) continue;
    if (!kids.has(parent)) kids.set(parent, []);
    kids.get(parent).push([b.y, b.y + b.h]);
  }
  let worst = { gap: 0 };
  for (const b of v.boxes) {
    if (b.item < v.n || !expanded.has(b.item - v.n)) continue;
    const gid = b.item - v.n;
    const spans = (kids.get(gid) || []).sort((p, q) => p[0] - q[0]);
    let end = b.y + HEADER;
    for (const [s, e] of [...spans, [b.y + b.h - PAD, 0]]) {
      if (s - end > worst.gap) worst = { gap: s - end, group: tree.groups[gid].label, from: end, to: s };
      end = Math.max(end, e);
    }
  }
  return worst;
}

test("backward graph: no group has an empty band taller than the gap between two rows", () => {
  const gm = backward();
  const tree = buildGroupTree(gm);
  const all = new Set(tree.groups.filter((g) => !g.dead).map((g) => g.id));
  for (const [what, ex] of [["first view", initialExpansion(tree)], ["all expanded", all]]) {
    const w = emptiestBand(gm, tree, ex);
    assert.ok(w.gap <= 30, `${what}: ${JSON.stringify(w)}`); // 30: layered.js's vgap
  }
});

test("stacked blocks do not drift sideways: long edges to the group's outputs run in a lane", () => {
  for (const level of ["aten_forward", "aten_backward"]) {
    const graphs = report.runs.baseline.graphs;
    const g = graphs.filter((x) => x.level === level).sort((a, b) => b.nodes.length - a.nodes.length)[0];
    const gm = level === "aten_backward" ? backward() : buildGraphModel(g);
    const tree = buildGroupTree(gm);
    const all = new Set(tree.groups.filter((x) => !x.dead).map((x) => x.id));
    const v = computeView(gm, tree, all);
    const blocks = v.boxes.filter((b) => b.item >= gm.n && /^\d+$/.test(tree.groups[b.item - gm.n].label));
    assert.ok(blocks.length >= 4, level);
    const centres = blocks.map((b) => b.x + b.w / 2);
    const widest = Math.max(...blocks.map((b) => b.w));
    const h = v.boxes[v.boxOf.get(gm.n + tree.groups.find((x) => !x.dead && x.label === "h").id)];
    assert.ok(Math.max(...centres) - Math.min(...centres) <= 40, `${level}: block centres ${centres.map(Math.round)}`);
    assert.ok(h.w <= widest + 120, `${level}: h is ${Math.round(h.w)} px wide, its widest block ${Math.round(widest)}`);
  }
});
