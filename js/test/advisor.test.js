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

const { renderAdvisor } = await import("../src/ui/advisor.js");

const find = (el, cls, out = []) => {
  if (el instanceof FakeElement) {
    if (el.className.split(" ").includes(cls)) out.push(el);
    el.children.forEach((c) => find(c, cls, out));
  }
  return out;
};

test("each candidate card shows its kind and the exact code it applied", () => {
  const report = {
    runs: { baseline: {} },
    candidates: [
      { function: "helper", why: "on the break's stack", status: "no_change", kind: "nonstrict" },
      {
        function: "capture_scalar_outputs", why: "the break's hint", status: "improved", kind: "config",
        code: "import torch\ntorch._dynamo.config.capture_scalar_outputs = True",
      },
      { function: "old", why: "a Report without kind", status: "rejected" },
    ],
  };
  const el = renderAdvisor(report);
  assert.deepEqual(find(el, "nsv-cand-kind").map((c) => c.textContent), ["nonstrict", "config", "nonstrict"]);
  assert.deepEqual(find(el, "nsv-cand-code").map((c) => c.textContent), [
    "import torch\ntorch._dynamo.config.capture_scalar_outputs = True",
  ]);
  assert.equal(
    find(el, "nsv-no-rec")[0].textContent,
    "No recommendation: no candidate reduced the breaks with matching outputs, so nothing was marked and the nonstrict run was not made.",
  );
});

test("with a nonstrict run, no recommendation says only that", () => {
  const el = renderAdvisor({ runs: { baseline: {}, nonstrict: {} }, candidates: [] });
  assert.equal(find(el, "nsv-no-rec")[0].textContent, "No recommendation: no candidate reduced the breaks with matching outputs.");
});

test("a recommendation names its marks, adapters, pytree classes and config flags", () => {
  const report = {
    runs: { baseline: {}, nonstrict: {} },
    candidates: [
      { function: "adapter: Enc.forward", why: "None inputs", status: "improved", kind: "adapter", code: "adapter code" },
      { function: "pytree: m.Box", why: "Box input", status: "improved", kind: "pytree", code: "register code" },
    ],
    recommendation: {
      functions: ["use_box"], adapters: ["Enc.forward"], pytree: ["m.Box"], config: ["capture_scalar_outputs"],
      code: "...", breaks_before: 3, breaks_after: 0, outputs_match: true,
    },
  };
  const el = renderAdvisor(report);
  assert.equal(
    find(el, "nsv-rec")[0].children[1].textContent,
    "Trace use_box non-strictly; trace Enc.forward through an adapter (None arguments); register m.Box with "
      + "torch.utils._pytree; set capture_scalar_outputs=True: breaks 3 → 0, outputs match",
  );
  assert.deepEqual(find(el, "nsv-cand-kind").map((c) => c.textContent), ["adapter", "pytree"]);
  const only = renderAdvisor({ ...report, recommendation: { ...report.recommendation, functions: [], pytree: [], config: [] } });
  assert.equal(find(only, "nsv-rec")[0].children[1].textContent,
    "trace Enc.forward through an adapter (None arguments): breaks 3 → 0, outputs match");
});

test("a recommendation says Dynamo's graph breaks and graphs beside the distinct breaks", () => {
  // Longformer: capture_scalar_outputs removes both graph breaks Dynamo counts, yet lists 2 sites
  const rec = {
    functions: [], config: ["capture_scalar_outputs"], code: "...", breaks_before: 1, breaks_after: 2, outputs_match: true,
    graph_breaks_before: 2, graph_breaks_after: 0, graphs_before: 4, graphs_after: 3,
  };
  const el = renderAdvisor({ runs: { baseline: {}, nonstrict: {} }, candidates: [], recommendation: rec });
  assert.equal(find(el, "nsv-rec-effect")[0].textContent,
    "set capture_scalar_outputs=True: graphs 4 → 3, breaks 1 → 2, graph breaks 2 → 0, outputs match");
});

test("what the time budget left untried is one line, and none when nothing was", () => {
  const untried = "time budget (3 s) ran out after 2.1 s; left untried: helper, Block.stats";
  const base = { runs: { baseline: {} }, candidates: [{ function: "helper", why: "w", status: "skipped" }] };
  const lines = find(renderAdvisor({ ...base, advisor_untried: untried }), "nsv-advisor-untried");
  assert.equal(lines.length, 1);
  assert.equal(lines[0].textContent, `Not tried: ${untried}`);
  assert.equal(find(renderAdvisor(base), "nsv-advisor-untried").length, 0);
});
