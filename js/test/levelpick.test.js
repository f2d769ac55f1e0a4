import assert from "node:assert/strict";
import { test } from "node:test";
import { graphAtLevel } from "../src/ui/levelpick.js";

// a stand-in for ReportIndex: graphs(run) in Report order, graph(run, id)
const g = (id, level, frame_id, compile_id, attempt) => ({ id, level, frame_id, compile_id, attempt });
const graphs = [
  g("4/0:aten_backward", "aten_backward", 4, 0), g("2/0_1:aten_forward", "aten_forward", 2, 0, 1),
  g("2/0:aten_backward", "aten_backward", 2, 0, 0), g("2/0_1:aten_backward", "aten_backward", 2, 0, 1),
  g("2/1:aten_backward", "aten_backward", 2, 1), g("7/0:dynamo", "dynamo", 7, 0), g("2/1:dynamo", "dynamo", 2, 1),
];
const index = { graphs: () => graphs, graph: (run, id) => graphs.find((x) => x.id === id) };

test("graphAtLevel keeps the compile id, attempt included", () => {
  assert.equal(graphAtLevel(index, "r", "2/0_1:aten_forward", "aten_backward"), "2/0_1:aten_backward");
});

test("graphAtLevel falls back to the same frame, then to the run's first graph at that level", () => {
  assert.equal(graphAtLevel(index, "r", "2/0_1:aten_forward", "dynamo"), "2/1:dynamo");
  assert.equal(graphAtLevel(index, "r", "missing", "dynamo"), "7/0:dynamo");
  assert.equal(graphAtLevel(index, "r", "2/0_1:aten_forward", "inductor"), null);
});
