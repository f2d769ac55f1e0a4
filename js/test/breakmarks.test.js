import assert from "node:assert/strict";
import { test } from "node:test";

import { breakFrames, breakOps, breakSide, compileOf } from "../src/contract/breakmarks.js";
import { buildGraphModel } from "../src/contract/graphmodel.js";

const F = "model.py";
const stacks = [
  [{ file: F, line: 14 }], // 0: the call of rms_scale in Block.forward
  [{ file: F, line: 14 }, { file: F, line: 6 }], // 1: inside rms_scale, after the break
  [{ file: F, line: 20 }, { file: F, line: 5 }], // 2: the breaking line itself
];
const brk = {
  location: { file: F, line: 5 }, stack: [{ file: F, line: 14 }, { file: F, line: 5 }],
  graph_before: "1/0_1:dynamo", graph_after: "3/0:dynamo",
};
const graph = (nodes) => buildGraphModel({ id: "g", level: "aten_forward", nodes });
const call = (name, stack) => ({ name, op: "call_function", target: `aten.${name}.default`, stack });

test("compileOf and breakSide match any level of the frame compile the Report names", () => {
  assert.equal(compileOf("1/0_1:aten_forward"), "1/0_1");
  assert.equal(breakSide(brk, "1/0_1:aten_forward"), "before");
  assert.equal(breakSide(brk, "3/0:dynamo"), "after");
  assert.equal(breakSide(brk, "1/1_1:aten_forward"), null);
  assert.equal(breakSide({ graph_before: null, graph_after: null }, "1/0_1:dynamo"), null);
});

test("breakFrames is innermost first, the location when there is no stack", () => {
  assert.deepEqual(breakFrames(brk).map((f) => f.line), [5, 14]);
  assert.deepEqual(breakFrames({ location: { file: F, line: 9 } }).map((f) => f.line), [9]);
});

test("breakOps: ops of the breaking line, else of the call that reached it", () => {
  const gm = graph([{ name: "x", op: "placeholder", target: "x", stack: 0 }, call("t", 0), call("addmm", 0), call("pow", 1)]);
  const got = breakOps(gm, (s) => stacks[s], brk);
  assert.equal(got.frame.line, 14);
  assert.deepEqual(got.nodes.map((i) => gm.nodes[i].name), ["t", "addmm", "pow"]);
  const gm2 = graph([call("t", 0), call("item", 2)]);
  const got2 = breakOps(gm2, (s) => stacks[s], brk);
  assert.equal(got2.frame.line, 5);
  assert.deepEqual(got2.nodes.map((i) => gm2.nodes[i].name), ["item"]);
  assert.deepEqual(breakOps(graph([call("t", null)]), (s) => stacks[s], brk), { frame: null, nodes: [] });
});
