// layout/fold.js — folds runs of structurally identical sibling module groups (h.0 … h.15)
//   into one "series" group that shows the count and the index range, like TensorBoard's
//   series nodes ("h[0–15] ×16"); expanding the series shows the blocks, each as before.
// Owns: the structural signature of a group (its ops in order, their tensor types, which
//   nodes are inlined from non-strict regions, the group's internal edges and sub-groups,
//   which baseline graph computed each op, as the block's 1st, 2nd, … graph), computed once
//   per tree and only for fold candidates, and inserting series groups into a
//   group tree built by layout/groups.js.
// Must not: lay out, draw, touch the DOM, change which module group a node belongs to, or
//   fold groups whose signatures differ (blocks that differ stay apart, in their own runs).

import { KIND_ATTR, KIND_INPUT } from "../contract/graphmodel.js";

/** Fewer sibling blocks than this stay unfolded (two boxes are no burden). */
export const MIN_SERIES = 3;

const INDEXED = /^(.*?)(\d+)$/;
const OPS = { call_function: 1, call_method: 2, call_module: 3 };

/**
 * Signature of group `gid`: equal for groups with the same structure wherever they sit in the
 * graph (node names, module indices and region ids do not count; ops, tensor types, non-strict
 * inlining, edge shape and nested group names do). Memoised on the group (`g.signature`).
 * Numbers only (two 32-bit hash lanes over interned strings): no string is built per node.
 * @param {ReturnType<import("../contract/graphmodel.js").buildGraphModel>} gm
 * @param {{groups: any[]}} tree
 * @param {number} gid
 * @param {{ord: Int32Array, ids: Map<string, number>, tok: number[]}} [scratch]  `signatureScratch(gm)`: ids must be shared
 */
export function structuralSignature(gm, tree, gid, scratch = signatureScratch(gm)) {
  const g = tree.groups[gid];
  if (g.signature !== undefined) return g.signature;
  const { ord, ids, tok } = scratch;
  const { kind: kinds, region, baseline, inStart, inIdx, nodes: gnodes } = gm;
  const id = (s) => { let v = ids.get(s); if (v === undefined) { v = ids.size + 1; ids.set(s, v); } return v; };
  const nodes = [];
  const number = (grp) => { // node order: depth first through the items, as drawn
    const items = grp.items; // indexed loops: this code runs once per load, mostly before it is optimised
    for (let q = 0; q < items.length; q++) {
      const it = items[q];
      if (it >= 0) { ord[it] = nodes.length; nodes.push(it); } else number(tree.groups[-it - 1]);
    }
  };
  number(g);
  const local = new Map(); // baseline graph -> its order of appearance in this group
  let t = 0; // tokens into tok, hashed at the end in one loop
  const walk = (grp) => {
    const items = grp.items;
    for (let q = 0; q < items.length; q++) {
      const it = items[q];
      if (it < 0) {
        const c = tree.groups[-it - 1];
        tok[t++] = -1; tok[t++] = id(c.kind === "region" ? "\u0000region" : c.label); tok[t++] = id(c.moduleType || "");
        walk(c);
        tok[t++] = -2;
        continue;
      }
      const nd = gnodes[it], kind = kinds[it];
      tok[t++] = kind; // KIND_NONSTRICT: the opaque non-strict call
      // names of inputs and constants carry the block index (primals_17, l_self_modules_h_modules_3_…)
      if (kind !== KIND_INPUT && kind !== KIND_ATTR) {
        const op = OPS[nd.op] || 9;
        tok[t++] = op;
        tok[t++] = id(op === 3 ? nd.module_type || "" : nd.target == null ? "" : String(nd.target));
      }
      tok[t++] = region[it] >= 0 ? 1 : 0;
      // which baseline graph computed it (merged view), as the block's 1st, 2nd, … graph: blocks
      // split by a graph break at the same op fold, a block split elsewhere stays apart
      const bg = baseline[it];
      if (bg >= 0) { let lb = local.get(bg); if (lb === undefined) { lb = local.size + 1; local.set(bg, lb); } tok[t++] = lb; }
      const ts = nd.tensors;
      if (ts) {
        for (let q = 0; q < ts.length; q++) {
          const x = ts[q];
          if (!x) { tok[t++] = -3; continue; }
          tok[t++] = id(x.dtype || "?");
          const shape = x.shape;
          if (shape) for (let r = 0; r < shape.length; r++) { const d = shape[r]; tok[t++] = typeof d === "number" ? d : id(String(d)); }
          tok[t++] = -3;
        }
      }
      for (let e = inStart[it]; e < inStart[it + 1]; e++) {
        const j = inIdx[e];
        tok[t++] = ord[j] >= 0 ? ord[it] - ord[j] : -4;
      }
      tok[t++] = -5;
    }
  };
  walk(g);
  for (let q = 0; q < nodes.length; q++) ord[nodes[q]] = -1;
  let a = 0x811c9dc5, b = 0x01000193;
  for (let k = 0; k < t; k++) {
    const x = tok[k] | 0;
    a = Math.imul(a ^ x, 0x01000193);
    b = Math.imul((b + x) ^ (b >>> 15), 0x2c1b3c6d);
  }
  g.signature = `${(a >>> 0).toString(36)}.${(b >>> 0).toString(36)}.${nodes.length}`;
  return g.signature;
}

const scratches = new WeakMap();

/** Working memory for structuralSignature over one graph model (one string table per model). */
export function signatureScratch(gm) {
  let s = scratches.get(gm);
  if (!s) { s = { ord: new Int32Array(gm.n).fill(-1), ids: new Map(), tok: [] }; scratches.set(gm, s); }
  return s;
}

/**
 * Fold runs of at least MIN_SERIES consecutive sibling module groups named `<prefix><k>` with
 * consecutive k (ascending or descending, as the graph runs them), the same module type and
 * the same structural signature, into one "series" group each. Mutates the tree: the blocks
 * become the series' children. Returns the number of series made.
 */
export function foldSeries(gm, tree) {
  const steps = foldSteps(gm, tree, Infinity);
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/** foldSeries in slices of about `sliceMs` of main-thread work, `pause()` awaited between them. */
export async function foldSeriesSliced(gm, tree, pause, sliceMs = 40) {
  const steps = foldSteps(gm, tree, sliceMs);
  let r = steps.next();
  while (!r.done) {
    await pause();
    r = steps.next();
  }
  return r.value;
}

/** Generator doing the work of foldSeries; yields between runs when a slice is used up. */
function* foldSteps(gm, tree, sliceMs) {
  let sliceStart = performance.now();
  const tired = () => sliceMs !== Infinity && performance.now() - sliceStart > sliceMs;
  const groups = tree.groups;
  const scratch = signatureScratch(gm);
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
        if (tired()) { yield; sliceStart = performance.now(); }
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
