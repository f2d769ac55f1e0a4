import assert from "node:assert/strict";
import { test } from "node:test";
import { breakKey, decodeReport, parseReportSliced, SUPPORTED_SCHEMA } from "../src/contract/decode.js";
import { chain, report } from "./fixtures.js";

test("valid report decodes with an index", () => {
  const r = decodeReport(JSON.stringify(report([chain(3)])));
  assert.equal(r.ok, true);
  assert.deepEqual(r.index.runNames, ["baseline"]);
  assert.equal(r.index.graph("baseline", "0/0:aten_forward").nodes.length, 5);
});

test("corrupt JSON gives a clear error, not a report", () => {
  const r = decodeReport('{"schema_version": 1, "runs": {');
  assert.equal(r.ok, false);
  assert.match(r.error, /not valid JSON/);
});

test("newer schema version is refused with the upgrade hint", () => {
  const r = decodeReport(JSON.stringify({ ...report([]), schema_version: SUPPORTED_SCHEMA + 1 }));
  assert.equal(r.ok, false);
  assert.match(r.error, /newer than this viewer/);
  assert.match(r.error, /pip install -U nstviz/);
});

test("missing schema_version and wrong shapes are refused", () => {
  assert.match(decodeReport("[]").error, /not an object/);
  assert.match(decodeReport('{"runs": {}}').error, /schema_version/);
  assert.match(decodeReport('{"schema_version": 3, "runs": {"baseline": {"graphs": [{"id": "g", "nodes": [{"name": 1}]}]}}}').error, /not a node/);
  assert.match(decodeReport('{"schema_version": 3}').error, /runs/);
  const noHeadline = report([]);
  delete noHeadline.headline;
  assert.match(decodeReport(JSON.stringify(noHeadline)).error, /headline/);
  const noId = report([]);
  noId.runs.baseline.breaks = [{ reason: "r", location: {} }];
  assert.match(decodeReport(JSON.stringify(noId)).error, /breaks\[0\] has no string id/);
});

test("an older schema version is refused with how to upgrade it", () => {
  const r = decodeReport(JSON.stringify({ ...report([]), schema_version: 1 }));
  assert.equal(r.ok, false);
  assert.match(r.error, /schema_version 1, older than this viewer reads \(3\)/);
});

test("break status comes from the diff, per run", () => {
  const loc = { file: "a.py", line: 3, function: "f" };
  const b1 = { id: "a.py:3:f:GB0025", gb_id: "GB0025", reason: "x", count: 2, fatal: false, location: loc };
  const b2 = { id: "a.py:9:f:GB0007", gb_id: "GB0007", reason: "y", count: 1, fatal: false, location: { ...loc, line: 9 } };
  const b3 = { id: "a.py:12:f:GB0124", gb_id: "GB0124", reason: "z", count: 1, fatal: false, location: { ...loc, line: 12 } };
  const r = report([], { diff: { resolved: [b1], remaining: [b2], introduced: [b3] } });
  r.runs.baseline.breaks = [b1, b2];
  r.runs.nonstrict = { graphs: [], breaks: [b2, b3], regions: [] };
  const d = decodeReport(JSON.stringify(r));
  assert.equal(d.index.breakStatus("baseline", b1), "resolved");
  assert.equal(d.index.breakStatus("baseline", b2), "remaining");
  assert.equal(d.index.breakStatus("nonstrict", b2), "remaining");
  assert.equal(d.index.breakStatus("nonstrict", b3), "introduced");
  assert.notEqual(breakKey(b1), breakKey(b2));
  // baseline only (nothing marked): the Report's diff is the baseline against itself, all
  // "remaining"; the viewer shows the breaks as they are
  const only = report([], { diff: { resolved: [], remaining: [b1, b2], introduced: [] } });
  only.runs.baseline.breaks = [b1, b2];
  const o = decodeReport(JSON.stringify(only));
  assert.equal(o.index.breakStatus("baseline", b1), null);
  assert.equal(o.index.breakStatus("baseline", b2), null);
  // the identity is the Report's id, never recomputed from the location
  assert.equal(breakKey({ ...b1, location: { file: "other.py", line: 1, function: "g" } }), "a.py:3:f:GB0025");
  assert.deepEqual(d.index.runNames, ["baseline", "nonstrict"]);
});

// A big Report as nstviz/render/html.py's report_text_for_html writes it: the index, the Report
// with each big graph's nodes marked, then the node lists a part at a time (one line each).
function inParts(data, partNodes) {
  const copy = structuredClone(data);
  const index = [];
  const lines = [];
  for (const [run, r] of Object.entries(copy.runs)) {
    r.graphs.forEach((g, at) => {
      if (g.nodes.length <= partNodes) return;
      const k = index.length;
      const parts = [];
      for (let a = 0; a < g.nodes.length; a += partNodes) parts.push(JSON.stringify(g.nodes.slice(a, a + partNodes)));
      index.push({ run, graph: at, parts: parts.length, marker: `nstviz-part-0-${k}` });
      lines.push(...parts);
      g.nodes = [`\u0000nstviz-part-0-${k}`];
    });
  }
  return [JSON.stringify(index), JSON.stringify(copy), ...lines].join("\n");
}

test("a Report in parts decodes to the same Report, at once or a part per task", async () => {
  const data = report([chain(7), chain(2, 0)]);
  const text = inParts(data, 3);
  const sizes = data.runs.baseline.graphs.map((g) => g.nodes.length);
  const partCount = sizes.reduce((sum, n) => sum + (n > 3 ? Math.ceil(n / 3) : 0), 0);
  assert.ok(sizes[0] > 6 && partCount >= 3);
  assert.equal(text.split("\n").length, 2 + partCount);
  const whole = decodeReport(JSON.stringify(data));
  const parts = decodeReport(text);
  assert.equal(parts.ok, true);
  assert.deepEqual(parts.report, whole.report);
  const turns = [];
  const sliced = await parseReportSliced(text, async () => turns.push(1), -1); // a turn before every part
  assert.deepEqual(sliced.data, JSON.parse(JSON.stringify(data)));
  assert.equal(turns.length, partCount);
});

test("a Report in parts with a part missing or one too many is an error, never a half Report", async () => {
  const text = inParts(report([chain(7)]), 3);
  const cut = text.slice(0, text.lastIndexOf("\n"));
  assert.match(decodeReport(cut).error, /not valid JSON.*truncated or corrupted/);
  assert.match((await parseReportSliced(`${text}\n[]`, async () => {})).error, /1 parts more than its index names/);
  assert.match(decodeReport("[]").error, /not an object/); // a JSON array is no Report in parts
});
