// ui/details.js — everything about the selected node: op, target, tensors, module, region,
//   provenance, inputs/users (clickable), its user stack with source lines.
// Owns: rendering one node's data as text.
// Must not: change the selection except through the callbacks it is given.

import { KIND_NAMES, tensorText } from "../contract/graphmodel.js";
import { h } from "./dom.js";
import { where } from "./format.js";
import { renderStack } from "./breaks.js";
import { sourceExcerpt } from "./source.js";
import { compileIdOf, compileIdText } from "../contract/compileid.js";
import { compileLink } from "./compiles.js";

export function renderDetails(ctx) {
  const { gm, i, run, graphId, index, onNode, onFrame, regionInfo, onCompile } = ctx;
  const graph = index.graph(run, graphId);
  const nd = gm.nodes[i];
  const rows = [
    ["name", nd.name], ["kind", KIND_NAMES[gm.kind[i]]], ["op", nd.op], ["target", nd.target],
    ["graph", `${run} · ${graphId}`],
  ];
  if (nd.tensors && nd.tensors.length) rows.push(["tensors", nd.tensors.map((t) => `${tensorText(t)} ${t.device || ""}${t.requires_grad ? " grad" : ""}`).join("\n")]);
  if (nd.value != null) rows.push(["value", nd.value]);
  if (nd.module) rows.push(["module", `${nd.module}${nd.module_type ? " (" + nd.module_type + ")" : ""}`]);
  else if (gm.module[i]) rows.push(["module", `${gm.module[i]} (from the forward node with the same seq_nr)`]);
  if (nd.from_node) rows.push(["from Dynamo node", nd.from_node]);
  if (nd.param) rows.push(["parameter", nd.param]);
  const baselineRow = baselineGraphText(gm, i);
  if (baselineRow) rows.push(["baseline graph", baselineRow]);
  if (nd.nonstrict_call) rows.push(["non-strict call", "the opaque node standing for a nonstrict_trace call; its body is inlined at the ATen level"]);
  for (const [k, v] of Object.entries(nd.extra || {})) rows.push([k, String(v)]);
  const region = gm.region[i] >= 0 ? regionInfo(gm.regionIds[gm.region[i]]) : null;
  const ins = [];
  for (let k = gm.inStart[i]; k < gm.inStart[i + 1]; k++) ins.push(gm.inIdx[k]);
  const outs = [];
  for (let k = gm.outStart[i]; k < gm.outStart[i + 1]; k++) outs.push(gm.outIdx[k]);
  const nodeList = (list) => list.length ? h("div", { class: "nsv-node-links" }, list.slice(0, 200).map((j) =>
    h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => onNode(j) }, gm.nodes[j].name)),
  list.length > 200 ? h("span", { class: "nsv-muted" }, ` … ${list.length - 200} more`) : null) : h("span", { class: "nsv-muted" }, "none");
  const stack = index.stack(nd.stack);
  const own = stack.length ? stack[stack.length - 1] : null;
  if (own) rows.splice(5, 0, ["source line", where(own.file, own.line)]);
  // an op inlined from a non-strict function: its own line above, the call that ran it here
  if (region && region.call_site && own && (own.file !== region.call_site.file || own.line !== region.call_site.line)) {
    rows.splice(6, 0, ["called at", where(region.call_site.file, region.call_site.line)]);
  }
  return h("div", { class: "nsv-details", "data-node": nd.name },
    h("div", { class: "nsv-details-title" }, h("span", { class: `nsv-kind-dot nsv-kind-${gm.kind[i]}${gm.region[i] >= 0 ? " nsv-kind-region" : ""}` }), nd.name),
    region ? h("div", { class: "nsv-region-note" },
      h("strong", null, "Inlined from a non-strict region. "),
      `${region.function || "?"} (region ${region.id})`,
      region.file ? ` · ${where(region.file, `${region.line_start ?? "?"}–${region.line_end ?? "?"}`)}` : "",
      (region.reads || []).length ? h("div", { class: "nsv-warn" }, "Reads values that are not inputs (baked in as constants, no guards): " + region.reads.map((r) => `${r.name} (${r.kind})`).join(", ")) : null) : null,
    h("dl", { class: "nsv-kv nsv-kv-wide" }, rows.map(([k, v]) => [h("dt", null, k), h("dd", { class: "nsv-mono" }, String(v ?? ""))])),
    graph && onCompile ? h("div", { class: "nsv-small" }, h("span", { class: "nsv-muted" }, "compiled by "), compileLink(run, compileIdOf(graph), onCompile, `compile ${compileIdText(compileIdOf(graph))}`)) : null,
    h("div", { class: "nsv-section-title" }, `inputs (${ins.length})`), nodeList(ins),
    h("div", { class: "nsv-section-title" }, `users (${outs.length})`), nodeList(outs),
    stack.length ? sourceExcerpt(index, stack[stack.length - 1], onFrame, 2, "node") : null,
    h("div", { class: "nsv-section-title" }, "user stack"),
    stack.length ? renderStack(stack, onFrame) : h("div", { class: "nsv-muted" }, "no user stack recorded"),
  );
}

/**
 * The "baseline graph" row: the graph that computed the op, or, in a graph whose other ops name
 * one (a nonstrict ATen graph), why this op names none. Null where the row does not apply.
 */
function baselineGraphText(gm, i) {
  const nd = gm.nodes[i];
  if (nd.baseline_graph) return nd.baseline_graph;
  if (!gm.baselineIds || !gm.baselineIds.length) return null;
  if (nd.op !== "call_function" || nd.stack == null) return null;
  return "no baseline graph: no baseline graph computed this op from this line, or which one cannot be told";
}
