import assert from "node:assert/strict";
import { test } from "node:test";

const { breakBadge } = await import("../src/ui/breaks.js");
const { outcomeClass } = await import("../src/ui/advisor.js");
const { graphOptionLabel } = await import("../src/ui/pickerlabel.js");
const { clampSide, MIN_SIDE, MIN_MAIN } = await import("../src/ui/resizer.js");

const index = (runs) => ({ runNames: Object.keys(runs), run: (n) => runs[n] });
const breaks = (k) => ({ breaks: Array.from({ length: k }, () => ({})) });

test("the Breaks badge counts the compared runs, not the advisor's attempts", () => {
  const b = breakBadge(index({ baseline: breaks(3), nonstrict: breaks(1), "attempt-1": breaks(3), "attempt-2": breaks(2) }));
  assert.equal(b.n, 4);
  assert.equal(b.title, "3 in baseline, 1 in nonstrict; the advisor's attempts are not counted");
  assert.equal(breakBadge(index({ baseline: breaks(2) })).title, "2 in baseline");
});

test("an advisor outcome is red only when the attempt failed or made things worse", () => {
  assert.match(outcomeClass("improved"), /nsv-good/);
  assert.match(outcomeClass("failed"), /nsv-error-line/);
  assert.match(outcomeClass("worse"), /nsv-error-line/);
  assert.match(outcomeClass("no_change"), /nsv-muted/);
});

test("a graph option names the function first", () => {
  assert.equal(graphOptionLabel({ id: "10/0:aten_inference", nodes: new Array(78), function: "forward" }), "forward · 10/0:aten_inference · 78 nodes");
  assert.equal(graphOptionLabel({ id: "0/0:dynamo", nodes: [1] }), "0/0:dynamo · 1 node");
});

test("the side pane's width stays within its bounds", () => {
  assert.equal(clampSide(10, 1000), MIN_SIDE);
  assert.equal(clampSide(5000, 1000), 1000 - MIN_MAIN);
  assert.equal(clampSide(400.4, 1000), 400);
  assert.equal(clampSide(400, 300), MIN_SIDE); // a body too narrow for both: the side keeps its minimum
});
