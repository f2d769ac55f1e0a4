import assert from "node:assert/strict";
import { test } from "node:test";
import { flaggedRanks, rankList, reportForRank } from "../src/ui/ranks.js";

const run = (name, graphs) => ({ name, graphs: graphs.map((id) => ({ id, nodes: [] })), breaks: [], regions: [] });
const report = {
  schema_version: 1,
  rank: 0,
  runs: { baseline: run("baseline", ["a"]), nonstrict: run("nonstrict", ["b"]) },
  diff: { resolved: [{ reason: "r0" }] },
  counts: { baseline: { graphs: 1 } },
  ranks: [
    { rank: 2, runs: { baseline: run("baseline", ["c"]), nonstrict: run("nonstrict", ["d"]) }, diff: { resolved: [] }, counts: { baseline: { graphs: 3 } } },
    { rank: 1, runs: { baseline: run("baseline", ["e"]), nonstrict: run("nonstrict", ["f", "g"]) }, diff: { introduced: [{ reason: "x" }] }, counts: { baseline: { graphs: 2 } } },
  ],
  findings: [{ kind: "ranks_differ", message: "after: rank 1 compiled differently from rank 0", ranks: [1], run: "nonstrict" }],
  stacks: [],
};

test("rankList: the top-level rank and the others, sorted; empty for a Report that is not per rank", () => {
  assert.deepEqual(rankList(report), [0, 1, 2]);
  assert.deepEqual(rankList({ runs: {} }), []);
  assert.deepEqual(rankList({ rank: 0, ranks: [] }), []);
});

test("reportForRank swaps in that rank's runs, diff and counts without touching the input", () => {
  const before = JSON.stringify(report);
  const r1 = reportForRank(report, 1);
  assert.equal(r1.rank, 1);
  assert.deepEqual(r1.runs.nonstrict.graphs.map((g) => g.id), ["f", "g"]);
  assert.deepEqual(r1.diff, { introduced: [{ reason: "x" }] });
  assert.deepEqual(r1.counts, { baseline: { graphs: 2 } });
  assert.deepEqual(rankList(r1), [0, 1, 2]);
  assert.equal(r1.findings, report.findings);
  assert.equal(JSON.stringify(report), before);
  // and back again to rank 0 from the derived view
  const r0 = reportForRank(r1, 0);
  assert.deepEqual(r0.runs.baseline.graphs.map((g) => g.id), ["a"]);
  assert.deepEqual(r0.diff, { resolved: [{ reason: "r0" }] });
  assert.deepEqual(rankList(r0), [0, 1, 2]);
});

test("reportForRank returns the input for its own rank or an unknown rank", () => {
  assert.equal(reportForRank(report, 0), report);
  assert.equal(reportForRank(report, 7), report);
});

test("flaggedRanks: the ranks findings name", () => {
  assert.deepEqual([...flaggedRanks(report)], [1]);
  assert.deepEqual([...flaggedRanks({})], []);
});
