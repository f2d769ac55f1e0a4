import assert from "node:assert/strict";
import { test } from "node:test";
import { compileIdOf, findCompile } from "../src/ui/compiles.js";

const run = {
  compiles: [
    { frame_id: 0, compile_id: 0, attempt: 1, function: "step" },
    { frame_id: 1, compile_id: 0, attempt: 0, function: "helper" },
    { frame_id: 0, compile_id: 2, attempt: 0, function: "step", limit_hit: true },
  ],
};

test("a compile's id is tlparse's: frame/compile, _attempt after a restart", () => {
  assert.equal(compileIdOf(run.compiles[0]), "0/0_1");
  assert.equal(compileIdOf(run.compiles[1]), "1/0");
  assert.equal(compileIdOf({ frame_id: 3, compile_id: 1 }), "3/1");
});

test("an id finds its compile; without the attempt (as breaks name it), the compile's last attempt", () => {
  assert.equal(findCompile(run, "0/0_1"), run.compiles[0]);
  assert.equal(findCompile(run, "0/0"), run.compiles[0]); // the break hit attempt 0; the record is attempt 1
  assert.equal(findCompile(run, "[0/2]"), run.compiles[2]);
  assert.equal(findCompile(run, "1/0"), run.compiles[1]);
  assert.equal(findCompile(run, "1/0_2"), null); // a named attempt that was not recorded
  assert.equal(findCompile(run, "5/0"), null);
  assert.equal(findCompile(run, "nonsense"), null);
  assert.equal(findCompile({}, "0/0"), null);
});
