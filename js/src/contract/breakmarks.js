// contract/breakmarks.js — where a graph break is, on the graphs: which graph ends at it,
//   which resumes after it, and which ops come from the line that breaks.
// Owns: pure functions over a Report's Break, Graph ids and a graph model (see graphmodel.js),
//   for the break marks (ui/breakmarks.js) and for anyone drawing breaks between graphs.
// Must not: touch the DOM, keep state, or guess a graph the Report does not name.

import { KIND_CALL, KIND_NONSTRICT } from "./graphmodel.js";

/** "1/0_1:aten_forward" -> "1/0_1": the frame compile a graph belongs to (all its levels). */
export function compileOf(graphId) {
  const s = String(graphId ?? "");
  const k = s.lastIndexOf(":");
  return k < 0 ? s : s.slice(0, k);
}

/**
 * Which side of a break a graph is on: "before" (the graph that ends at the break: the last
 * graph compiled before it), "after" (the resume function's graph that starts after it), or
 * null. Any level of the same frame compile counts (the Report names the Dynamo graphs).
 * @param {{graph_before?: string|null, graph_after?: string|null}} brk
 * @param {string} graphId
 * @returns {"before"|"after"|null}
 */
export function breakSide(brk, graphId) {
  if (!brk || !graphId) return null;
  const c = compileOf(graphId);
  if (brk.graph_before && compileOf(brk.graph_before) === c) return "before";
  if (brk.graph_after && compileOf(brk.graph_after) === c) return "after";
  return null;
}

/** The break's user frames, innermost first (its location when no stack was kept). */
export function breakFrames(brk) {
  const stack = (brk && brk.stack) || [];
  if (stack.length) return stack.slice().reverse();
  return brk && brk.location ? [brk.location] : [];
}

/**
 * The ops of a graph that come from the breaking line: nodes (calls and non-strict calls) whose
 * user stack holds the break's innermost frame (file:line); where none does (the line computes
 * nothing itself, e.g. `torch._dynamo.graph_break()`), the next frame out: the call that
 * reached the break. Returns {frame, nodes} (frame null and nodes [] when nothing matches).
 * @param {{n: number, nodes: any[], kind: Uint8Array|number[]}} gm graph model
 * @param {(i: number|null|undefined) => Array<{file: string, line: number}>} stackOf a node's stack by its index
 * @param {object} brk a Report Break
 */
export function breakOps(gm, stackOf, brk) {
  const frames = breakFrames(brk);
  if (!gm || !frames.length) return { frame: null, nodes: [] };
  const keys = frames.map((f) => `${f.file}\u0000${f.line}`);
  // per interned stack: the innermost break frame it holds (index into keys), computed once
  const depthOf = new Map();
  const best = [];
  let bestDepth = keys.length;
  for (let i = 0; i < gm.n; i++) {
    const k = gm.kind[i];
    if (k !== KIND_CALL && k !== KIND_NONSTRICT) continue;
    const s = gm.nodes[i].stack;
    if (s == null) continue;
    let d = depthOf.get(s);
    if (d === undefined) {
      d = keys.length;
      for (const loc of stackOf(s) || []) {
        const at = keys.indexOf(`${loc.file}\u0000${loc.line}`);
        if (at >= 0 && at < d) d = at;
      }
      depthOf.set(s, d);
    }
    if (d < bestDepth) { bestDepth = d; best.length = 0; }
    if (d === bestDepth && d < keys.length) best.push(i);
  }
  return bestDepth < keys.length ? { frame: frames[bestDepth], nodes: best } : { frame: null, nodes: [] };
}
