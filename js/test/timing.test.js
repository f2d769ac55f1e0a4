import assert from "node:assert/strict";
import { test } from "node:test";

// A minimal DOM: elements (HTML and SVG), attributes, text nodes.
class FakeNode {}
class FakeText extends FakeNode {
  constructor(text) { super(); this.textContent = text; }
}
class FakeElement extends FakeNode {
  constructor(tag, ns) { super(); this.tagName = tag; this.ns = ns || null; this.children = []; this.attrs = {}; this.className = ""; }
  setAttribute(k, v) { this.attrs[k] = v; }
  addEventListener() {}
  appendChild(c) { this.children.push(c); return c; }
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
}
globalThis.Node = FakeNode;
globalThis.document = {
  createElement: (t) => new FakeElement(t),
  createElementNS: (ns, t) => new FakeElement(t, ns),
  createTextNode: (t) => new FakeText(t),
};

const { renderTiming, timedRuns, timingBar } = await import("../src/ui/timing.js");
const { checkReport } = await import("../src/contract/decode.js");
const fixtures = await import("./fixtures.js");

const call = (median, q1, q3, text) => ({ median_s: median, q1_s: q1, q3_s: q3, min_s: q1, max_s: q3, calls: 20, warmup: 1, text });
const timing = (graphs, steady, eager, text) => ({ graphs, first_call_s: 1, compile_s: 0.5, compile_text: "500 ms", steady, eager, text, recompiles: 0, backend: "aot_eager" });

function find(el, pred, out = []) {
  if (el instanceof FakeElement) {
    if (pred(el)) out.push(el);
    el.children.forEach((c) => find(c, pred, out));
  }
  return out;
}

const report = {
  runs: {
    baseline: { timing: timing(3, call(0.004, 0.003, 0.005, "4.00 ms ± 1.00 (median of 20)"), call(0.002, 0.002, 0.002, "2.00 ms ± 0.00 (median of 20)"), "baseline line") },
    nonstrict: { timing: timing(1, call(0.001, 0.001, 0.002, "1.00 ms ± 0.50 (median of 20)"), null, "nonstrict line") },
    "attempt-1": { timing: null },
  },
};

test("one block per timed run, with the Report's texts as they are", () => {
  const el = renderTiming(report, ["baseline", "nonstrict", "attempt-1"]);
  assert.equal(el.attrs["data-testid"], "timing");
  const rows = find(el, (e) => e.attrs["data-run"]);
  assert.deepEqual(rows.map((r) => r.attrs["data-run"]), ["baseline", "nonstrict"]);
  const cells = rows.map((r) => ["run", "graphs", "compile", "steady", "eager"].map((k) => find(r, (e) => e.attrs["data-k"] === k)[0].textContent));
  assert.deepEqual(cells, [
    ["baseline", "3", "500 ms", "4.00 ms ± 1.00 (median of 20)", "2.00 ms ± 0.00 (median of 20)"],
    ["nonstrict", "1", "500 ms", "1.00 ms ± 0.50 (median of 20)", "—"],
  ]);
  assert.equal(rows[0].attrs.title, "baseline line");
});

test("the bar is the median, the whisker the quartiles, on one scale for all runs", () => {
  const scale = 158 / 0.005; // the largest quartile shown is baseline's q3
  const bar = timingBar(report.runs.baseline.timing, scale);
  assert.equal(bar.ns, "http://www.w3.org/2000/svg");
  const rect = find(bar, (e) => e.tagName === "rect")[0];
  assert.equal(Number(rect.attrs.width), 0.004 * scale);
  const [whisker, eager] = find(bar, (e) => e.tagName === "line");
  assert.deepEqual([Number(whisker.attrs.x1), Number(whisker.attrs.x2)], [0.003 * scale, 0.005 * scale]);
  assert.equal(Number(eager.attrs.x1), 0.002 * scale);
  const table = renderTiming(report, ["baseline", "nonstrict"]);
  const widths = find(table, (e) => e.tagName === "rect").map((r) => Number(r.attrs.width));
  assert.deepEqual(widths, [0.004 * scale, 0.001 * scale]);
});

test("no timed run: no table; the decoder accepts timing and refuses a malformed one", () => {
  assert.equal(renderTiming({ runs: { baseline: {} } }, ["baseline"]), null);
  assert.deepEqual(timedRuns({ runs: { baseline: { timing: null } } }, ["baseline"]), []);
  const base = fixtures.report([]);
  base.runs.baseline.timing = report.runs.baseline.timing;
  const ok = checkReport(base);
  assert.equal(ok.ok, true, ok.error);
  const bad = checkReport({ ...base, runs: { baseline: { ...base.runs.baseline, timing: 3 } } });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /timing is not an object/);
});

test("a timing of the captured run's own code says its compile figure is the captured run's", () => {
  const steady = call(0.01, 0.009, 0.011, "10.0 ms ± 1.0 (median of 20)");
  const report = { runs: {
    baseline: { timing: { ...timing(3, steady, null, "t"), reused: true } },
    "attempt-1": { timing: timing(1, steady, null, "t") },
  } };
  const rows = find(renderTiming(report, ["baseline", "attempt-1"]), (e) => e.attrs["data-run"]);
  assert.equal(rows.length, 2);
  assert.match(rows[0].textContent, /compile 500 ms \(captured run\)/);
  assert.doesNotMatch(rows[1].textContent, /captured run/);
});
