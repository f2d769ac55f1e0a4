import assert from "node:assert/strict";
import { test } from "node:test";
import { progressStatus, progressView } from "../src/ui/progress.js";

test("phase titles: running phases tick, terminal ones do not", () => {
  for (const phase of ["starting", "baseline", "eager", "nonstrict", "attempt-3"]) assert.equal(progressView({ phase }).ticking, true, phase);
  assert.equal(progressView({ phase: "attempt-3" }).title, "Running: attempt-3");
  assert.deepEqual(progressView({ phase: "interrupted" }), { title: "Interrupted", tone: "interrupted", ticking: false });
  assert.deepEqual(progressView({ phase: "error" }), { title: "Failed", tone: "error", ticking: false });
  assert.equal(progressView({ phase: "done" }).ticking, false);
  assert.equal(progressView({}).ticking, false);
});

test("status line", () => {
  assert.equal(progressStatus({ runs_done: 1, runs_total: 2 }, 3.14159), "1 of 2 runs · 3.1 s");
  assert.equal(progressStatus({}, null), "");
  assert.equal(progressStatus({}, 0), "0.0 s");
});
