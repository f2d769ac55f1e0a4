// contract/graphmodel.js — a Report Graph turned into compact arrays for layout and search.
// Owns: node kinds, short labels, edges as index arrays (CSR), search text, region index.
// Must not: touch the DOM, lay out, or keep references to UI state.

import { inputLabel } from "./names.js";

export const KIND_INPUT = 0;
export const KIND_OUTPUT = 1;
export const KIND_CALL = 2;
export const KIND_ATTR = 3;
export const KIND_NONSTRICT = 4;
export const KIND_NAMES = ["input", "output", "call", "constant", "non-strict call"];

/** Readable short form of an FX target: "torch.ops.aten.mm.default" -> "mm". */
export function shortTarget(op, target, name) {
  if (op === "placeholder") return inputLabel(name);
  if (op === "output") return "output";
  let s = String(target ?? "");
  const builtin = /^<built-in (?:function|method) ([\w.]+)/.exec(s);
  if (builtin) s = builtin[1];
  const fn = /^<function ([\w.<>]+)/.exec(s);
  if (fn) s = fn[1];
  s = s.replace(/^torch\.ops\./, "").replace(/^(aten|prims|_operator|operator|torch\._ops)\./, "");
  s = s.replace(/\.default$/, "");
  // Python callables (torch._C._nn.linear, torch.nn.functional.relu): the function name
  if (op === "call_function" && (/^(torch|math|builtins)\./.test(s) || /^[a-z_][\w]*(\.[a-z_][\w]*){2,}$/i.test(s))) s = s.split(".").pop();
  if (s.length > 30) {
    const parts = s.split(".");
    s = parts.slice(-2).join(".");
    if (s.length > 30) s = s.slice(0, 29) + "…";
  }
  return s || String(name);
}

/** Human form of a tensor meta: "f32[2, 8, 64]". */
export function tensorText(t) {
  if (!t) return "";
  const shape = Array.isArray(t.shape) ? t.shape.join(", ") : "";
  return `${t.dtype || "?"}[${shape}]`;
}

/**
 * Compact form of one graph.
 * @param {any} graph  Report Graph
 */
export function buildGraphModel(graph) {
  const steps = modelSteps(graph, Infinity);
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/**
 * buildGraphModel in slices of about `sliceMs` of main-thread work, `pause()` awaited between
 * them (a big graph: no long task).
 */
export async function buildGraphModelSliced(graph, pause, sliceMs = 40) {
  const steps = modelSteps(graph, sliceMs);
  let r = steps.next();
  while (!r.done) {
    await pause();
    r = steps.next();
  }
  return r.value;
}

/** Generator doing the work of buildGraphModel; yields when a slice of `sliceMs` is used up. */
function* modelSteps(graph, sliceMs) {
  let sliceStart = performance.now();
  const tired = () => sliceMs !== Infinity && performance.now() - sliceStart > sliceMs;
  const nodes = graph.nodes || [];
  const n = nodes.length;
  const byName = new Map();
  for (let i = 0; i < n; i++) byName.set(nodes[i].name, i);
  const kind = new Uint8Array(n);
  const labels = new Array(n);
  const region = new Int32Array(n).fill(-1);
  const regionIds = [];
  const regionIndex = new Map();
  const baseline = new Int32Array(n).fill(-1);
  const baselineIds = [];
  const baselineIndex = new Map();
  // ops repeat (a 10k-node graph has a few hundred distinct targets): each label worked out once
  const labelCache = new Map();
  const labelOf = (op, target, name) => {
    if (op === "output" || typeof target !== "string" || !target) return shortTarget(op, target, name);
    const key = op === "call_function" ? target : `${op}\u0000${target}`;
    let label = labelCache.get(key);
    if (label === undefined) { label = shortTarget(op, target, name); labelCache.set(key, label); }
    return label;
  };
  // CSR of inputs (predecessors)
  const inStart = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    inStart[i] = total;
    const ins = nodes[i].inputs;
    if (ins) total += ins.length;
  }
  inStart[n] = total;
  const inIdx = new Int32Array(total);
  let e = 0;
  const outDeg = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if ((i & 2047) === 2047 && tired()) { yield; sliceStart = performance.now(); }
    const nd = nodes[i];
    const ins = nd.inputs;
    const start = e;
    for (let q = 0, m = ins ? ins.length : 0; q < m; q++) {
      const j = byName.get(ins[q]);
      if (j === undefined || j === i) continue;
      // skip duplicate inputs (x + x) so edges stay unique
      let dup = false;
      for (let k = start; k < e; k++) if (inIdx[k] === j) { dup = true; break; }
      if (dup) continue;
      inIdx[e++] = j;
      outDeg[j]++;
    }
    inStart[i] = start;
    const op = nd.op;
    kind[i] = nd.nonstrict_call ? KIND_NONSTRICT
      : op === "placeholder" ? KIND_INPUT
      : op === "output" ? KIND_OUTPUT
      : op === "get_attr" ? KIND_ATTR
      : KIND_CALL;
    // a placeholder standing for a parameter/buffer is labelled by it ("blocks.0.proj.weight")
    labels[i] = op === "placeholder" ? (nd.param || shortTarget(op, nd.target, nd.name)) : labelOf(op, nd.target, nd.name);
    if (nd.region != null) {
      let r = regionIndex.get(nd.region);
      if (r === undefined) { r = regionIds.length; regionIds.push(nd.region); regionIndex.set(nd.region, r); }
      region[i] = r;
    }
    if (nd.baseline_graph != null) {
      let b = baselineIndex.get(nd.baseline_graph);
      if (b === undefined) { b = baselineIds.length; baselineIds.push(nd.baseline_graph); baselineIndex.set(nd.baseline_graph, b); }
      baseline[i] = b;
    }
  }
  inStart[n] = e;
  if (tired()) { yield; sliceStart = performance.now(); }
  // successors CSR
  const outStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) outStart[i + 1] = outStart[i] + outDeg[i];
  const outIdx = new Int32Array(e);
  const fill = outStart.slice(0, n);
  for (let v = 0; v < n; v++) {
    for (let k = inStart[v]; k < inStart[v + 1]; k++) {
      const u = inIdx[k];
      outIdx[fill[u]++] = v;
    }
  }
  const module = nodes.map((nd) => nd.module || null);
  return {
    graph, nodes, n, byName, kind, labels, search: null, region, module, moduleInferred: null, regionIds, baseline, baselineIds,
    inStart, inIdx, outStart, outIdx, edgeCount: e,
  };
}

/** Lower-cased search text per node ("name\u0001op\u0001target\u0001module\u0001type"), built on first use. */
export function searchText(gm) {
  if (!gm.search) searchTextUntil(gm, () => false);
  return gm.search;
}

/**
 * Build the search text ahead of use, a part at a time until `stop()` says time is up (an
 * idle callback's deadline); returns true once complete. searchText() finishes what is left.
 */
export function searchTextUntil(gm, stop) {
  if (gm.search) return true;
  const out = gm._searchPart || (gm._searchPart = new Array(gm.n));
  let i = gm._searchNext || 0;
  for (; i < gm.n; i++) {
    if ((i & 255) === 255 && stop()) break;
    const nd = gm.nodes[i];
    out[i] = `${nd.name}\u0001${nd.op}\u0001${nd.target ?? ""}\u0001${gm.module[i] ?? ""}\u0001${nd.module_type ?? ""}`.toLowerCase();
  }
  gm._searchNext = i;
  if (i < gm.n) return false;
  gm.search = out;
  delete gm._searchPart;
  return true;
}

/**
 * Backward graphs: nodes without a module path take the module of the forward node with the
 * same autograd sequence number (`extra.seq_nr`), the link tlparse's provenance view uses.
 * Marks them in gm.moduleInferred. Returns how many were filled.
 */
export function inferModulesFromForward(gm, forward) {
  const bySeq = new Map();
  for (const nd of forward.nodes || []) {
    const seq = nd.extra && nd.extra.seq_nr;
    if (seq != null && nd.module && !bySeq.has(seq)) bySeq.set(seq, nd.module);
  }
  let filled = 0;
  for (let i = 0; i < gm.n; i++) {
    if (gm.module[i]) continue;
    const seq = gm.nodes[i].extra && gm.nodes[i].extra.seq_nr;
    const m = seq != null ? bySeq.get(seq) : undefined;
    if (m) {
      gm.module[i] = m;
      if (!gm.moduleInferred) gm.moduleInferred = new Uint8Array(gm.n);
      gm.moduleInferred[i] = 1;
      filled++;
    }
  }
  return filled;
}
