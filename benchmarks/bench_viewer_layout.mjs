// bench_viewer_layout.mjs — layout/grouping/search timings in Node (no browser), for the
// viewer's pure modules. Usage: node benchmarks/bench_viewer_layout.mjs REPORT.json [...]
// (make Reports with: python benchmarks/make_synthetic_report.py 10000 -o /tmp/r10k.json)
import { readFileSync } from "node:fs";
import { decodeReport } from "../js/src/contract/decode.js";
import { buildGraphModel } from "../js/src/contract/graphmodel.js";
import { buildGroupTree, initialExpansion } from "../js/src/layout/groups.js";
import { layeredLayout } from "../js/src/layout/layered.js";
import { computeView } from "../js/src/layout/view.js";
import { searchNodes } from "../js/src/interaction/search.js";

const ms = (t0) => (performance.now() - t0).toFixed(1);
const best = (fn, k = 3) => { let b = Infinity, out; for (let i = 0; i < k; i++) { const t0 = performance.now(); out = fn(); b = Math.min(b, performance.now() - t0); } return [b.toFixed(1), out]; };

for (const f of process.argv.slice(2)) {
  let t0 = performance.now();
  const d = decodeReport(readFileSync(f, "utf8"));
  const parse = ms(t0);
  const g = d.report.runs.nonstrict.graphs.at(-1);
  const [model, gm] = best(() => buildGraphModel(g));
  const [tree, tr] = best(() => buildGroupTree(gm));
  const ex = initialExpansion(tr);
  const [first, v] = best(() => computeView(gm, tr, ex));
  const all = new Set(tr.groups.filter((x) => !x.dead).map((x) => x.id));
  const [allMs, va] = best(() => computeView(gm, tr, all));
  const [search, hits] = best(() => searchNodes(gm, "addmm"));
  console.log(`${f}: ${gm.n} nodes | parse+check ${parse} ms | model ${model} ms | groups ${tree} ms | first view ${first} ms (${v.boxes.length} boxes) | everything expanded ${allMs} ms (${va.boxes.length} boxes) | search ${search} ms (${hits.length} hits)`);
}
// flat layered layout alone
for (const n of [2000, 10000, 50000]) {
  const edges = [];
  for (let i = 1; i < n; i++) { edges.push(i - 1, i); if (i % 10 === 0 && i >= 30) edges.push(i - 30, i); }
  const w = new Float64Array(n).fill(80), h = new Float64Array(n).fill(30);
  const [t] = best(() => layeredLayout({ count: n, w, h, edges }));
  console.log(`flat layered layout, ${n} boxes, ${edges.length / 2} edges: ${t} ms`);
}
