import assert from "node:assert/strict";
import { test } from "node:test";

// A minimal DOM: enough for ui/dom.js's h() (elements, attributes, text nodes).
class FakeNode {}
class FakeText extends FakeNode {
  constructor(text) { super(); this.textContent = text; }
}
class FakeElement extends FakeNode {
  constructor(tag) { super(); this.tagName = tag.toUpperCase(); this.children = []; this.attrs = {}; this.className = ""; this.dataset = {}; }
  setAttribute(k, v) { this.attrs[k] = v; if (k.startsWith("data-")) this.dataset[k.slice(5)] = v; }
  addEventListener() {}
  appendChild(c) { this.children.push(c); return c; }
  removeChild(c) { this.children = this.children.filter((x) => x !== c); return c; }
  get firstChild() { return this.children[0] || null; }
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
}
globalThis.Node = FakeNode;
globalThis.document = { createElement: (t) => new FakeElement(t), createTextNode: (t) => new FakeText(t) };

const { renderBreaks } = await import("../src/ui/breaks.js");
const { inRankOrder, tallyOf } = await import("../src/ui/format.js");

const find = (el, cls, out = []) => {
  if (el instanceof FakeElement) {
    if (el.className.split(" ").includes(cls)) out.push(el);
    el.children.forEach((c) => find(c, cls, out));
  }
  return out;
};

const loc = (line, fn) => ({ file: "/w/demo.py", line, function: fn });
// the demo's rms_scale (4 graph breaks over 4 frame compiles), a break Dynamo could not resume
// from (reached twice, counted once) and a data-dependent branch (reached, never counted)
// Break.tally and Run.break_order as nstviz/report/model.py writes them (the viewer computes neither).
const tally = (reached, caused, caused_text, splits_text = "") => ({ reached, caused, exact: true, caused_text, splits_text });
const BREAKS = [
  { id: "branch", reason: "Data-dependent branching", count: 1, caused: 0, fatal: false, location: loc(54, "branch"), compile_ids: ["9/0"], splits: [],
    tally: tally(1, 0, "caused 0 graph breaks") },
  { id: "helper", reason: "graph_break()", count: 2, caused: 1, fatal: false, location: loc(38, "helper"), compile_ids: ["6/0", "7/0"],
    splits: [{ compile_id: "7/0", function: "helper", count: 1 }], tally: tally(2, 1, "caused 1 graph break", "helper 7/0") },
  { id: "rms", reason: "graph_break()", count: 4, caused: 4, fatal: false, location: loc(24, "rms_scale"), compile_ids: ["0/0", "1/0", "2/0", "1/1"],
    splits: [
      { compile_id: "0/0", function: "TinyNet.forward", count: 1 }, { compile_id: "1/0", function: "Block.forward", count: 1 },
      { compile_id: "2/0", function: "rms_scale", count: 1 }, { compile_id: "1/1", function: "Block.forward", count: 1 },
    ], tally: tally(4, 4, "caused 4 graph breaks", "TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0") },
];
const RUN = { breaks: BREAKS, break_order: [2, 1, 0] };
const index = { runNames: ["baseline"], run: () => RUN, breakStatus: () => null, source: () => null };

test("the break list is ranked by graph breaks caused and says caused and reached, with the frames", () => {
  const host = new FakeElement("div");
  assert.equal(renderBreaks(host, {}, index, { onSelect() {}, onGraph() {}, onFrame() {} }), 3);
  const items = find(host, "nsv-break");
  assert.deepEqual(items.map((el) => el.dataset.index), ["2", "1", "0"]); // selections keep the run's index
  const counts = items.map((el) => find(el, "nsv-count").map((c) => c.textContent));
  assert.deepEqual(counts, [
    ["caused 4 graph breaks", "reached 4×"],
    ["caused 1 graph break", "reached 2×"],
    ["caused 0 graph breaks", "reached 1×"],
  ]);
  assert.match(find(items[0], "nsv-count")[0].attrs.title, /torch\._dynamo\.utils\.counters\["graph_break"\]/);
  assert.match(find(items[0], "nsv-count")[1].attrs.title, /tlparse/);
  assert.equal(find(items[0], "nsv-break-splits")[0].textContent,
    "caused 4 graph breaks: TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0");
  assert.equal(find(items[2], "nsv-break-splits").length, 0);
});

test("the list reads the counts text and the order from the Report: it computes neither", () => {
  // an order and a text no ranking rule would give: the viewer must show them as the Report says
  const odd = { breaks: [BREAKS[2], BREAKS[0]].map((b) => ({ ...b, tally: { ...b.tally, caused_text: `said ${b.id}` } })), break_order: [1, 0] };
  const host = new FakeElement("div");
  renderBreaks(host, {}, { ...index, run: () => odd }, { onSelect() {}, onGraph() {}, onFrame() {} });
  const items = find(host, "nsv-break");
  assert.deepEqual(items.map((el) => el.dataset.index), ["1", "0"]);
  assert.deepEqual(items.map((el) => find(el, "nsv-count")[0].textContent), ["said branch", "said rms"]);
  // a hand-made Report without the facts: the run's own order, no counts invented
  assert.deepEqual(inRankOrder({ breaks: [{}, {}] }).map((x) => x.i), [0, 1]);
  assert.deepEqual(inRankOrder({ breaks: [{}, {}], break_order: [1, 7] }).map((x) => x.i), [0, 1]);
  assert.equal(tallyOf({ count: 3 }).caused_text, "");
  assert.equal(tallyOf({ count: 3 }).reached, 3);
});

test("a break at C/builtin code that remains says what else can remove it", () => {
  const advice = "a call into C/builtin code (`zlib.crc32(b\"x\")`): ... torch.library.custom_op ... substitute_in_graph";
  const withAdvice = { breaks: [{ ...BREAKS[2], advice }, BREAKS[1]], break_order: [0, 1] };
  const host = new FakeElement("div");
  renderBreaks(host, {}, { ...index, run: () => withAdvice }, { onSelect() {}, onGraph() {}, onFrame() {} });
  const shown = find(host, "nsv-break-advice").map((el) => el.textContent);
  assert.deepEqual(shown, [`what else: ${advice}`]);
});
