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
const { breakCounts, rankBreaks, splitsText } = await import("../src/ui/format.js");

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
const BREAKS = [
  { id: "branch", reason: "Data-dependent branching", count: 1, caused: 0, fatal: false, location: loc(54, "branch"), compile_ids: ["9/0"], splits: [] },
  { id: "helper", reason: "graph_break()", count: 2, caused: 1, fatal: false, location: loc(38, "helper"), compile_ids: ["6/0", "7/0"],
    splits: [{ compile_id: "7/0", function: "helper", count: 1 }] },
  { id: "rms", reason: "graph_break()", count: 4, caused: 4, fatal: false, location: loc(24, "rms_scale"), compile_ids: ["0/0", "1/0", "2/0", "1/1"],
    splits: [
      { compile_id: "0/0", function: "TinyNet.forward", count: 1 }, { compile_id: "1/0", function: "Block.forward", count: 1 },
      { compile_id: "2/0", function: "rms_scale", count: 1 }, { compile_id: "1/1", function: "Block.forward", count: 1 },
    ] },
];
const index = { runNames: ["baseline"], run: () => ({ breaks: BREAKS }), breakStatus: () => null, source: () => null };

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

test("old Reports without caused: estimated from distinct frames, marked with ~", () => {
  const old = { id: "x", reason: "r", count: 6, fatal: false, location: loc(1, "f"), compile_ids: ["0/0", "0/0_1", "1/0", "1/0_1", "2/0", "2/1"] };
  assert.deepEqual(breakCounts(old), { caused: 3, reached: 6, exact: false });
  const host = new FakeElement("div");
  renderBreaks(host, {}, { ...index, run: () => ({ breaks: [old] }) }, { onSelect() {}, onGraph() {}, onFrame() {} });
  assert.equal(find(host, "nsv-count")[0].textContent, "caused ~3 graph breaks");
});

test("ranking: caused, then reached, then fatal, then first seen; splits text groups compiles by function", () => {
  const b = (id, count, caused, fatal = false) => ({ id, count, caused, fatal });
  const order = rankBreaks([b("a", 5, 1), b("b", 2, 2), b("c", 5, 1, true), b("d", 5, 1), b("e", 9, 0)]).map((x) => x.b.id);
  assert.deepEqual(order, ["b", "c", "a", "d", "e"]);
  assert.equal(splitsText({ splits: [{ compile_id: "4/0", function: "f", count: 2 }] }), "f 4/0×2");
  // written once with its count, however large (a loop over the count once hung on fuzzed Reports)
  assert.equal(splitsText({ splits: [{ compile_id: "4/0", function: "f", count: 2 ** 53 }] }), `f 4/0×${2 ** 53}`);
});

test("a break at C/builtin code that remains says what else can remove it", () => {
  const advice = "a call into C/builtin code (`zlib.crc32(b\"x\")`): ... torch.library.custom_op ... substitute_in_graph";
  const withAdvice = [{ ...BREAKS[2], advice }, BREAKS[1]];
  const host = new FakeElement("div");
  renderBreaks(host, {}, { ...index, run: () => ({ breaks: withAdvice }) }, { onSelect() {}, onGraph() {}, onFrame() {} });
  const shown = find(host, "nsv-break-advice").map((el) => el.textContent);
  assert.deepEqual(shown, [`what else: ${advice}`]);
});
