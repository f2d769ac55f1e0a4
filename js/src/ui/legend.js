// ui/legend.js — the legend under the graphs: node kinds, the non-strict regions shown (per
//   function, with counts; clicking one cycles through its regions), and in the merged view
//   the colour of each baseline graph.
// Owns: rendering the legend from the panes' graph models.
// Must not: change the view except by asking a pane to reveal a region.

import { KIND_NONSTRICT } from "../contract/graphmodel.js";
import { graphColor, regionColor } from "../render/theme.js";
import { clear, h } from "./dom.js";

/** @param {import("./app.js").App} app */
export function renderLegend(app) {
  clear(app.legend);
  const kinds = [["input", "nsv-lg-input"], ["call", "nsv-lg-call"], ["constant", "nsv-lg-attr"], ["output", "nsv-lg-output"], ["non-strict call (opaque)", "nsv-lg-nonstrict"], ["module group (click to expand)", "nsv-lg-group"]];
  app.legend.appendChild(h("div", { class: "nsv-legend-row" }, kinds.map(([t, c]) => h("span", { class: "nsv-lg" }, h("span", { class: `nsv-sw ${c}` }), t))));
  const regionRows = [];
  const merged = [];
  for (const p of app.panes) {
    if (!p.entry) continue;
    const gm = p.entry.gm;
    if (app.mode === "merged") {
      gm.baselineIds.forEach((id, b) => merged.push([id, graphColor(b)]));
      if (gm.baselineIds.length && unattributed(gm)) merged.push(["no baseline graph", null]);
      continue;
    }
    const counts = new Map();
    for (let i = 0; i < gm.n; i++) if (gm.region[i] >= 0 && gm.kind[i] !== KIND_NONSTRICT) counts.set(gm.region[i], (counts.get(gm.region[i]) || 0) + 1);
    const byFn = new Map();
    for (const [r, c] of counts) {
      const fn = app.regionFunction(p.run, gm.regionIds[r]);
      const cur = byFn.get(fn) || { regions: [], nodes: 0, color: regionColor(r), approximate: false };
      cur.regions.push(gm.regionIds[r]);
      // regions ingested from a TORCH_TRACE log are matched by source line, not provenance
      if (app.regionInfo(p.run, gm.regionIds[r]).approximate) cur.approximate = true;
      cur.nodes += c;
      byFn.set(fn, cur);
    }
    for (const [fn, v] of byFn) regionRows.push(h("button", { class: "nsv-lg nsv-lg-region-item", type: "button", title: `regions ${v.regions.join(", ")} (click: show the next one)`, onclick: () => p.revealNextRegion(v.regions) },
      h("span", { class: "nsv-sw nsv-sw-region" }), `${fn}: ${v.regions.length} call${v.regions.length === 1 ? "" : "s"}, ${v.nodes} inlined node${v.nodes === 1 ? "" : "s"}${app.panes.length > 1 ? ` (${p.run})` : ""}${v.approximate ? " (approximate: matched by the call's source line)" : ""}`));
  }
  if (regionRows.length) app.legend.appendChild(h("div", { class: "nsv-legend-row" }, h("span", { class: "nsv-legend-title" }, "Inlined from non-strict regions"), regionRows));
  if (merged.length) {
    app.legend.appendChild(h("div", { class: "nsv-legend-row", "data-testid": "baseline-legend" }, h("span", { class: "nsv-legend-title" }, "Baseline graph that computed each op"),
      merged.map(([id, col]) => { const sw = h("span", { class: "nsv-sw" }); if (col) sw.style.background = col; return h("span", { class: "nsv-lg", "data-graph": col ? id : "" }, sw, id); })));
  } else if (app.mode === "merged") {
    app.legend.appendChild(h("div", { class: "nsv-legend-row nsv-muted" }, "This graph's nodes carry no baseline_graph information."));
  }
}

/** True when some op of the graph names no baseline graph (drawn uncoloured). */
function unattributed(gm) {
  for (let i = 0; i < gm.n; i++) {
    if (gm.baseline[i] < 0 && gm.nodes[i].op === "call_function" && gm.nodes[i].stack != null) return true;
  }
  return false;
}
