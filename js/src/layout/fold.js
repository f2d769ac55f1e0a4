// layout/fold.js — folds runs of structurally identical sibling module groups (h.0 … h.15)
//   into one "series" group that shows the count and the index range, like TensorBoard's
//   series nodes ("h[0–15] ×16"); expanding the series shows the blocks, each as before.
// Owns: the structural signature of a group (its ops in order, their tensor types, which
//   nodes are inlined from non-strict regions, the group's internal edges and sub-groups),
//   computed once per tree and only for fold candidates, and inserting series groups into a
//   group tree built by layout/groups.js.
// Must not: lay out, draw, touch the DOM, change which module group a node belongs to, or
//   fold groups whose signatures differ (blocks that differ stay apart, in their own runs).

import { KIND_ATTR, KIND_INPUT, tensorText } from "../contract/graphmodel.js";

/** Fewer sibling blocks than this stay unfolded (two boxes are no burden). */
export const MIN_SERIES = 3;

const INDEXED = /^(.*?)(\d+)$/;

/**
 * Signature of group `gid`: equal for groups with the same structure wherever they sit in the
 * graph (node names, module indices and region ids do not count; ops, tensor types, non-strict
 * inlining, edge shape and nested group names do). Memoised on the group (`g.signature`).
 * @param {ReturnType<import("../contract/graphmodel.js").buildGraphModel>} gm
 * @param {{groups: any[]}} tree
 * @param {number} gid
 * @param {Int32Array} [scratch]  length gm.n, filled with -1 (reused between calls)
 */
export function structuralSignature(gm, tree, gid, scratch) {
  const g = tree.groups[gid];
  if (g.signature !== undefined) return g.signature;
  const ord = scratch || new Int32Array(gm.n).fill(-1);
  const nodes = [];
  const parts = [];
  const walk = (grp) => {
    for (const it of grp.items) {
      if (it >= 0) { ord[it] = nodes.length; nodes.push(it); parts.push(null); continue; }
      const c = tree.groups[-it - 1];
      parts.push(`[${c.kind === "region" ? "region" : c.label}:${c.moduleType || ""}`);
      walk(c);
      parts.push("]");
    }
  };
  walk(g);
  let k = 0;
  for (let p = 0; p < parts.length; p++) {
    if (parts[p] !== null) continue;
    const i = nodes[k++];
    let ins = "";
    for (let e = gm.inStart[i]; e < gm.inStart[i + 1]; e++) {
      const j = gm.inIdx[e];
      ins += ord[j] >= 0 ? `${ord[i] - ord[j]},` : "^,";
    }
    parts[p] = `${nodeToken(gm, i)}(${ins})`;
  }
  for (const i of nodes) ord[i] = -1;
  const text = parts.join(";");
  g.signature = `${hash(text, 0x811c9dc5)}${hash(text, 0x01000193)}:${nodes.length}`;
  return g.signature;
}

/** What of node i counts for identity: its op (not its name), tensor types, non-strict role. */
function nodeToken(gm, i) {
  const nd = gm.nodes[i];
  const kind = gm.kind[i];
  const t = nd.tensors && nd.tensors.length ? nd.tensors.map(tensorText).join("|") : "";
  // names of inputs and constants carry the block index (primals_17, l_self_modules_h_modules_3_…)
  const op = kind === KIND_INPUT || kind === KIND_ATTR ? nd.op
    : nd.op === "call_module" ? `call_module:${nd.module_type || ""}`
    : `${nd.op}:${nd.target ?? ""}`;
  const role = nd.nonstrict_call ? "N" : gm.region[i] >= 0 ? "R" : "";
  return `${op}${role}<${t}>`;
}

function hash(s, seed) {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
    h ^= h >>> 13;
  }
  return (h >>> 0).toString(36).padStart(7, "0");
}

/**
 * Fold runs of at least MIN_SERIES consecutive sibling module groups named `<prefix><k>` with
 * consecutive k (ascending or descending, as the graph runs them), the same module type and
 * the same structural signature, into one "series" group each. Mutates the tree: the blocks
 * become the series' children. Returns the number of series made.
 */
export function foldSeries(gm, tree) {
  const groups = tree.groups;
  const scratch = new Int32Array(gm.n).fill(-1);
  let made = 0;
  const parents = groups.filter((g) => !g.dead && g.items && g.groupChildren.length >= MIN_SERIES);
  for (const p of parents) {
    const items = p.items;
    const out = [];
    let s = 0;
    while (s < items.length) {
      const run = runFrom(tree, items, s);
      if (run.length < MIN_SERIES) { out.push(items[s]); s++; continue; }
      // split the named run where the structure changes
      let a = 0;
      while (a < run.length) {
        const sig = structuralSignature(gm, tree, run[a], scratch);
        let b = a + 1;
        while (b < run.length && structuralSignature(gm, tree, run[b], scratch) === sig) b++;
        if (b - a >= MIN_SERIES) { out.push(-(makeSeries(tree, p, run.slice(a, b), sig) + 1)); made++; }
        else for (let c = a; c < b; c++) out.push(-(run[c] + 1));
        a = b;
      }
      s += run.length;
    }
    if (out.length !== items.length) {
      p.items = out;
      p.groupChildren = out.filter((it) => it < 0).map((it) => -it - 1);
    }
  }
  return made;
}

/** Group ids of the longest run of indexed sibling module groups starting at items[s]. */
function runFrom(tree, items, s) {
  const groups = tree.groups;
  const head = items[s] < 0 ? groups[-items[s] - 1] : null;
  const m = head && head.kind === "module" ? INDEXED.exec(head.label) : null;
  if (!m) return [];
  const run = [head.id];
  let prev = Number(m[2]), step = 0;
  for (let t = s + 1; t < items.length && items[t] < 0; t++) {
    const g = groups[-items[t] - 1];
    const mm = g.kind === "module" ? INDEXED.exec(g.label) : null;
    if (!mm || mm[1] !== m[1] || g.moduleType !== head.moduleType) break;
    const d = Number(mm[2]) - prev;
    if ((d !== 1 && d !== -1) || (step && d !== step)) break;
    step = d;
    prev = Number(mm[2]);
    run.push(g.id);
  }
  return run;
}

function makeSeries(tree, parent, ids, signature) {
  const groups = tree.groups;
  const first = groups[ids[0]], last = groups[ids[ids.length - 1]];
  const [, prefix, a] = INDEXED.exec(first.label);
  const b = INDEXED.exec(last.label)[2];
  const lo = Math.min(Number(a), Number(b)), hi = Math.max(Number(a), Number(b));
  const base = prefix.replace(/[._]$/, "") || (parent.id === 0 ? "" : parent.label.split(".").pop());
  const s = {
    id: groups.length, key: `${parent.key}\u0000series:${first.key}`, label: `${base}[${lo}–${hi}] ×${ids.length}`,
    kind: "series", parent: parent.id, depth: parent.depth + 1, children: [], groupChildren: ids.slice(),
    leafCount: 0, minIndex: Infinity, maxIndex: -1, moduleType: first.moduleType, region: -1, regionCount: 0,
    items: ids.map((id) => -(id + 1)), count: ids.length, each: first.leafCount, signature,
    range: [Number(a), Number(b)],
  };
  for (const id of ids) {
    const g = groups[id];
    g.parent = s.id;
    s.leafCount += g.leafCount;
    s.regionCount += g.regionCount;
    s.minIndex = Math.min(s.minIndex, g.minIndex);
    s.maxIndex = Math.max(s.maxIndex, g.maxIndex);
  }
  groups.push(s);
  return s.id;
}
