import assert from "node:assert/strict";
import { test } from "node:test";
import { headlineParts, outputsText } from "../src/ui/summary.js";

const counts = (graphs, breaks) => ({ graphs, breaks, break_hits: breaks, ops: 1, aten_ops: 1, regions: 0, inlined_nodes: 0, full_graph: graphs === 1 && !breaks });
const fatal = { gb_id: "GB0001", reason: "r", count: 1, fatal: true, location: { file: "f.py", line: 1, function: "f" } };
const eagerMatch = { match: true, max_abs_diff: 0, comparisons: [{ left: "eager", right: "nonstrict", match: true, max_abs_diff: 0 }] };

function report(baseline, nonstrict, c, outputs) {
  return { runs: { baseline: { name: "baseline", ...baseline }, nonstrict: { name: "nonstrict", ...nonstrict } }, counts: c, outputs };
}

test("baseline failed under fullgraph=True, nonstrict compiled: green 'fullgraph failed → 1 graph'", () => {
  const r = report({ breaks: [fatal], error: "Unsupported: ...", error_type: "Unsupported" }, {}, { baseline: counts(0, 1), nonstrict: counts(1, 0) }, eagerMatch);
  const parts = headlineParts(r);
  assert.deepEqual(parts[1], ["fullgraph failed → 1 graph", "good"]);
  assert.ok(!parts.some(([, tone]) => tone === "bad"), JSON.stringify(parts));
  assert.deepEqual(parts[2], ["outputs match eager", "good"]);
});

test("red only for real regressions: more breaks, nonstrict raised, outputs differ", () => {
  const more = headlineParts(report({}, {}, { baseline: counts(2, 1), nonstrict: counts(3, 2) }, { match: true, comparisons: [{ left: "baseline", right: "nonstrict", match: true }] }));
  assert.deepEqual(more[0], ["1 break → 2", "bad"]);
  assert.deepEqual(more[1], ["2 graphs → 3", "neutral"]);
  assert.deepEqual(more[2], ["outputs match", "good"]);
  const raised = headlineParts(report({ breaks: [fatal] }, { error: "boom", error_type: "ValueError" }, { baseline: counts(0, 1), nonstrict: counts(0, 0) }, { match: null }));
  assert.deepEqual(raised[1], ["nonstrict raised ValueError", "bad"]);
  assert.equal(outputsText({ match: false, max_abs_diff: 0.5, comparisons: eagerMatch.comparisons }), "outputs DIFFER from eager (max |Δ| 0.5)");
});

test("a fatal break in one function while others compiled: graph counts, not 'fullgraph failed'", () => {
  const r = report({ breaks: [fatal], error: "Unsupported: ...", error_type: "Unsupported" }, {}, { baseline: counts(6, 2), nonstrict: counts(2, 0) }, eagerMatch);
  assert.deepEqual(headlineParts(r)[1], ["6 graphs → 2", "good"]);
});
