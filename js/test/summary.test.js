import assert from "node:assert/strict";
import { test } from "node:test";

// A minimal DOM: enough for ui/dom.js's h() (elements, attributes, text nodes).
class FakeNode {}
class FakeText extends FakeNode {
  constructor(text) { super(); this.textContent = text; }
}
class FakeElement extends FakeNode {
  constructor(tag) { super(); this.tagName = tag.toUpperCase(); this.children = []; this.attrs = {}; this.className = ""; }
  setAttribute(k, v) { this.attrs[k] = v; }
  addEventListener() {}
  appendChild(c) { this.children.push(c); return c; }
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
}
globalThis.Node = FakeNode;
globalThis.document = { createElement: (t) => new FakeElement(t), createTextNode: (t) => new FakeText(t) };

const { markLines, renderHeadline } = await import("../src/ui/summary.js");

test("the headline is the Report's chips, drawn as they are (text, tone, kind)", () => {
  const chips = [
    { kind: "breaks", text: "1 break → 0", tone: "good" },
    { kind: "graphs", text: "fullgraph failed → 1 graph", tone: "good" },
    { kind: "outputs", text: "outputs match eager", tone: "good" },
  ];
  // counts and runs that disagree with the chips: the viewer must not recompute anything
  const report = { runs: { baseline: { breaks: [] } }, counts: { baseline: { breaks: 7, graphs: 7 } }, headline: { chips, text: "" } };
  const el = renderHeadline(report);
  assert.equal(el.attrs["data-testid"], "headline");
  assert.deepEqual(el.children.map((c) => [c.textContent, c.className, c.attrs["data-kind"]]), [
    ["1 break → 0", "nsv-hl nsv-hl-good", "breaks"],
    ["fullgraph failed → 1 graph", "nsv-hl nsv-hl-good", "graphs"],
    ["outputs match eager", "nsv-hl nsv-hl-good", "outputs"],
  ]);
});

test("a red chip stays red, a headline with no chips draws nothing", () => {
  const el = renderHeadline({ headline: { chips: [{ kind: "failure", text: "nonstrict raised ValueError", tone: "bad" }] } });
  assert.deepEqual(el.children.map((c) => c.className), ["nsv-hl nsv-hl-bad"]);
  assert.equal(renderHeadline({ headline: { chips: [] } }).children.length, 0);
});

test("marks are listed per decorator: nonstrict_trace marks, then leaf_function ones (a Report without the field is nonstrict_trace)", () => {
  const run = { marked: [
    { qualname: "Block.stats" },
    { qualname: "log_stats", decorator: "leaf_function", origin: "in_source" },
    { qualname: "helper", decorator: "nonstrict_trace", applied: false },
  ] };
  assert.deepEqual(markLines(run), ["non-strict: Block.stats, helper (never applied)", "leaf_function: log_stats"]);
  assert.deepEqual(markLines({ marked: [{ qualname: "f", decorator: "leaf_function" }] }), ["leaf_function: f"]);
  assert.deepEqual(markLines({}), []);
});
