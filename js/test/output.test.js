import assert from "node:assert/strict";
import { test } from "node:test";
import { COLLAPSE_LINES, outputRunOrder, outputSections } from "../src/ui/output.js";

const runs = {
  "attempt-10": { stdout: "a10\n" }, "attempt-2": { stdout: "a2\n" },
  nonstrict: { stdout: "ns\n", stderr: "warn\n" }, eager: { stdout: "" }, baseline: { stdout: "b\n" },
};

test("runs are listed baseline, eager, nonstrict, attempt-N (numeric)", () => {
  assert.deepEqual(outputRunOrder({ runs }), ["baseline", "eager", "nonstrict", "attempt-2", "attempt-10"]);
});

test("stdout and stderr become text blocks; silent runs get none", () => {
  const s = outputSections({ runs });
  const ns = s.find((x) => x.run === "nonstrict");
  assert.deepEqual(ns.blocks.map((b) => [b.kind, b.text]), [["stdout", "ns\n"], ["stderr", "warn\n"]]);
  assert.equal(s.find((x) => x.run === "eager").blocks.length, 0);
});

test("long output starts collapsed, short output open", () => {
  const long = Array.from({ length: COLLAPSE_LINES + 5 }, (_, i) => `line ${i}`).join("\n");
  const s = outputSections({ runs: { baseline: { stdout: long, stderr: "x" } } })[0].blocks;
  assert.equal(s[0].collapsed, true);
  assert.equal(s[1].collapsed, false);
});

test("a run that raised shows type, message and traceback; hostile text is kept verbatim", () => {
  const hostile = "</script><img src=x onerror=alert(1)>";
  const s = outputSections({ runs: { nonstrict: { stdout: hostile, error: "boom", error_type: "ValueError", error_traceback: "Traceback (most recent call last):\n  ...\nValueError: boom\n" } } })[0].blocks;
  assert.equal(s[0].text, hostile);
  const err = s.find((b) => b.kind === "error");
  assert.equal(err.head, "ValueError: boom");
  assert.match(err.text, /^Traceback/);
  assert.doesNotMatch(err.text, /\n$/);
});

test("line counts ignore the final newline; the error type is not repeated", async () => {
  const { errorHead } = await import("../src/ui/output.js");
  assert.equal(outputSections({ runs: { baseline: { stdout: "one\n" } } })[0].blocks[0].lines, 1);
  assert.equal(errorHead({ error: "Unsupported: x", error_type: "Unsupported" }), "Unsupported: x");
  assert.equal(errorHead({ error: "x", error_type: "ValueError" }), "ValueError: x");
});
