import assert from "node:assert/strict";
import { test } from "node:test";

const { filterOutputs, isTensor, outputOrder } = await import("../src/ui/outputcheck.js");

const d = (path, match, shape) => ({ path, match, shape });

test("display order: differing values first, then tensors, then the rest; the Report's order within each", () => {
  const details = [d("return.config.a", true), d("return.config.b", false), d("return.hidden", true, "[2]"),
    d("return.config.c", true), d("return.logits", false, "[4]"), d("return.loss", null, "[]")];
  assert.deepEqual(outputOrder(details).map((x) => x.path),
    ["return.logits", "return.config.b", "return.hidden", "return.loss", "return.config.a", "return.config.c"]);
  assert.equal(details[0].path, "return.config.a"); // the Report's list is not reordered
});

test("filters: differences only, tensors only, both", () => {
  const details = [d("a", true), d("b", false), d("t", true, "[2]"), d("u", false, "[3]")];
  assert.deepEqual(filterOutputs(details, { diffsOnly: true }).map((x) => x.path), ["b", "u"]);
  assert.deepEqual(filterOutputs(details, { tensorsOnly: true }).map((x) => x.path), ["t", "u"]);
  assert.deepEqual(filterOutputs(details, { diffsOnly: true, tensorsOnly: true }).map((x) => x.path), ["u"]);
  assert.ok(isTensor({ dtype: "f32" }) && !isTensor({ path: "x" }));
});
