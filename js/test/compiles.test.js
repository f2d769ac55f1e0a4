import assert from "node:assert/strict";
import { test } from "node:test";
import { compileIdOf, compileIdText, namesFrameCompile } from "../src/contract/compileid.js";
import { findCompile } from "../src/ui/compiles.js";

const run = {
  compiles: [
    { frame_id: 0, compile_id: 0, attempt: 1, function: "step" },
    { frame_id: 1, compile_id: 0, attempt: 0, function: "helper" },
    { frame_id: 0, compile_id: 2, attempt: 0, function: "step", limit_hit: true },
  ],
};
const id = (frame_id, frame_compile_id, attempt) => (attempt == null ? { frame_id, frame_compile_id } : { frame_id, frame_compile_id, attempt });

test("a compile's id is tlparse's: frame/compile, _attempt after a restart", () => {
  assert.equal(compileIdText(compileIdOf(run.compiles[0])), "0/0_1");
  assert.equal(compileIdText(compileIdOf(run.compiles[1])), "1/0");
  assert.equal(compileIdText(compileIdOf({ frame_id: 3, compile_id: 1 })), "3/1");
});

test("compile ids under compiled autograd are written as torch writes them", () => {
  assert.equal(compileIdText({ frame_id: 0, frame_compile_id: 1, compiled_autograd_id: 3 }), "!3/0/1");
  assert.equal(compileIdText({ frame_id: 0, frame_compile_id: 1, attempt: 2, compiled_autograd_id: 3 }), "!3/0/1_2");
  assert.equal(compileIdText({ frame_id: null, frame_compile_id: null, compiled_autograd_id: 0 }), "!0");
  assert.equal(compileIdText(null), "");
  assert.equal(compileIdText("0/0"), ""); // ids are objects: text is never parsed back
});

test("an id names a record's frame compile, whatever the attempt", () => {
  assert.ok(namesFrameCompile(id(0, 0), run.compiles[0]));
  assert.ok(namesFrameCompile(id(0, 0, 3), run.compiles[0]));
  assert.ok(!namesFrameCompile(id(0, 1), run.compiles[0]));
  assert.ok(!namesFrameCompile(null, run.compiles[0]));
});

test("an id finds its compile; without the attempt (as breaks name it), the compile's last attempt", () => {
  assert.equal(findCompile(run, id(0, 0, 1)), run.compiles[0]);
  assert.equal(findCompile(run, id(0, 0)), run.compiles[0]); // the break hit attempt 0; the record is attempt 1
  assert.equal(findCompile(run, id(0, 2)), run.compiles[2]);
  assert.equal(findCompile(run, id(1, 0)), run.compiles[1]);
  assert.equal(findCompile(run, id(1, 0, 2)), null); // a named attempt that was not recorded
  assert.equal(findCompile(run, id(5, 0)), null);
  assert.equal(findCompile(run, "0/0"), null); // text is not an id
  assert.equal(findCompile({}, id(0, 0)), null);
});
