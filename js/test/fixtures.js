// test/fixtures.js — small Report/graph builders for the unit tests.

/** A graph from a compact spec: [[name, op, inputs, extra], ...]. */
export function graph(spec, id = "0/0:aten_forward", level = "aten_forward") {
  return {
    id, level, frame_id: 0, compile_id: 0,
    nodes: spec.map(([name, op, inputs = [], extra = {}]) => ({ name, op, target: extra.target ?? name, inputs, region: null, ...extra })),
  };
}

/** A chain x -> a1 -> ... -> aN -> output, with modules m{i % k}. */
export function chain(n, modules = 0) {
  const spec = [["x", "placeholder", []]];
  let prev = "x";
  for (let i = 0; i < n; i++) {
    const name = `a${i}`;
    spec.push([name, "call_function", [prev], { target: "aten.relu.default", module: modules ? `layers.${Math.floor(i / Math.ceil(n / modules))}` : null }]);
    prev = name;
  }
  spec.push(["output", "output", [prev]]);
  return graph(spec);
}

export function report(graphs, extra = {}) {
  return {
    schema_version: 3, torch_version: "2.13.0",
    runs: { baseline: { name: "baseline", graphs, breaks: [], regions: [] } },
    counts: {}, headline: { chips: [], text: "" },
    ...extra,
  };
}
