// layout/groups.js — the collapsible hierarchy of a graph: nn.Module path groups, one group
//   per non-strict region inside its module, "series" groups folding identical blocks
//   (layout/fold.js), and "chunk" groups that split very wide levels.
// Owns: building the tree from node `module`/`region` fields, the initial expansion under a
//   budget of visible boxes, and which box (node or collapsed group) stands for each node.
// Must not: compute coordinates, touch the DOM, or read anything but the graph model.

import { foldSeries, foldSeriesSliced } from "./fold.js";

export const ROOT = 0;

/**
 * @param {ReturnType<import("../contract/graphmodel.js").buildGraphModel>} gm
 * @param {{chunkLimit?: number, chunkSize?: number, fold?: boolean}} [opts]
 */
export function buildGroupTree(gm, opts = {}) {
  const steps = treeSteps(gm, opts, Infinity);
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/**
 * buildGroupTree in slices of about `sliceMs` of main-thread work, `pause()` awaited between
 * them (a big graph: no long task).
 */
export async function buildGroupTreeSliced(gm, opts, pause, sliceMs = 40) {
  const steps = treeSteps(gm, opts, sliceMs);
  let r = steps.next();
  while (!r.done) {
    await pause();
    r = steps.next();
  }
  return r.value;
}

/** Generator doing the work of buildGroupTree; yields when a slice of `sliceMs` is used up. */
function* treeSteps(gm, opts, sliceMs) {
  let sliceStart = performance.now();
  const tired = (i) => (i & 2047) === 2047 && sliceMs !== Infinity && performance.now() - sliceStart > sliceMs;
  const chunkLimit = opts.chunkLimit ?? 2500;
  const chunkSize = opts.chunkSize ?? 400;
  const { n, nodes } = gm;
  const groups = [];
  const byKey = new Map();
  const mk = (key, label, kind, parent) => {
    const g = {
      id: groups.length, key, label, kind, parent, depth: parent < 0 ? 0 : groups[parent].depth + 1,
      children: [], groupChildren: [], leafCount: 0, minIndex: Infinity, maxIndex: -1,
      moduleType: null, region: -1, regionCount: 0,
    };
    groups.push(g);
    byKey.set(key, g.id);
    if (parent >= 0) groups[parent].groupChildren.push(g.id);
    return g.id;
  };
  mk("", "graph", "root", -1);
  // A module called twice (self.lin(stats(self.lin(x)))) gets one group per call when the
  // second call reads values computed after the first call ended: one group for both would
  // make a cycle with what runs in between, drawn as edges going back up.
  const active = new Map(); // module path -> group of its current call
  const calls = new Map(); // module path -> number of call groups made
  const lastIndex = [0]; // group -> index of its latest node
  const leftAfter = [-1]; // group -> last index of its previous run, once other nodes came between
  let prevGroup = -1; // group of the previously placed node
  const inside = (a, g) => { for (; a >= 0; a = groups[a].parent) if (a === g) return true; return false; };
  const reenters = (i, g) => {
    if (prevGroup >= 0 && !inside(prevGroup, g)) leftAfter[g] = lastIndex[g]; // a new run of g starts
    const since = leftAfter[g];
    if (since < 0) return false;
    for (let k = gm.inStart[i]; k < gm.inStart[i + 1]; k++) {
      const j = gm.inIdx[k];
      if (j > since && leafGroup[j] >= 0 && !inside(leafGroup[j], g)) return true;
    }
    return false;
  };
  const groupFor = (i, module, regionIdx) => {
    let gid = ROOT;
    let path = "";
    if (module) {
      for (const seg of module.split(".")) {
        path = path ? `${path}.${seg}` : seg;
        let found = active.get(path);
        if (found !== undefined && (groups[found].parent !== gid || reenters(i, found))) found = undefined;
        if (found === undefined) {
          const c = (calls.get(path) || 0) + 1;
          calls.set(path, c);
          found = mk(c === 1 ? path : `${path}#${c}`, c === 1 ? seg : `${seg} (call ${c})`, "module", gid);
          lastIndex[found] = -1;
          leftAfter[found] = -1;
          active.set(path, found);
        }
        gid = found;
      }
    }
    if (regionIdx >= 0) {
      const rkey = `${groups[gid].key}\u0000region:${regionIdx}`;
      const found = byKey.get(rkey);
      if (found !== undefined) return found;
      const rid = mk(rkey, gm.regionIds[regionIdx], "region", gid);
      groups[rid].region = regionIdx;
      lastIndex[rid] = -1;
      leftAfter[rid] = -1;
      return rid;
    }
    return gid;
  };
  const leafGroup = new Int32Array(n).fill(-1);
  // Nodes without a module path (inputs, parameters, their transposes and views, ops Dynamo
  // did not attribute) join the deepest group holding all their users, so a parameter shows
  // inside the Linear that uses it. The output node is not counted as a user: training graphs
  // return parameters and activations for the backward.
  const moduleOf = gm.module || nodes.map((nd) => nd.module || null);
  // Inputs and constants follow their users too, even with a module path (Dynamo gives
  // parameters one): placed first in FX order, they would otherwise open their module's group
  // long before its computation, which then looks like a second call.
  const follows = (i) => gm.region[i] < 0 && gm.kind[i] !== 1 && (!moduleOf[i] || gm.kind[i] === 0 || gm.kind[i] === 3);
  // Runs of nodes of one module share their group: while no group of the chain was left and
  // entered again (leftAfter < 0 all the way up), groupFor would walk the same path to it.
  let lastModule, lastRegion = -2, lastGroup = -1;
  const clean = (g) => { for (; g >= 0; g = groups[g].parent) if (leftAfter[g] >= 0) return false; return true; };
  for (let i = 0; i < n; i++) {
    if (tired(i)) { yield; sliceStart = performance.now(); }
    if (follows(i)) continue;
    // the opaque non-strict call node stays in its module; inlined nodes get a region group
    const module = moduleOf[i], regionIdx = nodes[i].nonstrict_call ? -1 : gm.region[i];
    let g = lastGroup;
    if (g < 0 || g !== prevGroup || module !== lastModule || regionIdx !== lastRegion) {
      g = groupFor(i, module, regionIdx);
      lastModule = module;
      lastRegion = regionIdx;
      lastGroup = clean(g) ? g : -1;
    }
    leafGroup[i] = g;
    for (let a = g; a >= 0; a = groups[a].parent) lastIndex[a] = i;
    prevGroup = g;
  }
  // Users with a module of their own decide first; users that followed their own users only
  // when there is no such user. (Backward graphs chain module-less gradient sums from block to
  // block: placed by all their users they would all land above the blocks, cutting the chain.)
  for (let i = n - 1; i >= 0; i--) {
    if (tired(i)) { yield; sliceStart = performance.now(); }
    if (leafGroup[i] >= 0) continue;
    let lca = -1, lcaAll = -1;
    for (let k = gm.outStart[i]; k < gm.outStart[i + 1]; k++) {
      const user = gm.outIdx[k];
      if (gm.kind[user] === 1) continue;
      const c = leafGroup[user];
      if (c < 0) continue; // a user that is later in the list cannot be unplaced in FX order
      lcaAll = lcaAll < 0 ? c : lowestCommon(groups, lcaAll, c);
      if (!follows(user)) lca = lca < 0 ? c : lowestCommon(groups, lca, c);
    }
    let g = lca >= 0 ? lca : lcaAll < 0 ? ROOT : lcaAll;
    while (groups[g].kind === "region") g = groups[g].parent; // regions hold inlined nodes only
    leafGroup[i] = g;
  }
  for (let i = 0; i < n; i++) groups[leafGroup[i]].children.push(i);
  if (tired(2047)) { yield; sliceStart = performance.now(); }
  // module types: a node whose module is exactly the group's path names the class
  for (let i = 0; i < n; i++) {
    const nd = nodes[i];
    if (nd.module && nd.module_type) {
      const gid = byKey.get(nd.module);
      if (gid !== undefined && !groups[gid].moduleType) groups[gid].moduleType = nd.module_type;
    }
  }
  for (const g of groups) {
    if (g.kind === "module" && g.key.includes("#") && !g.moduleType) {
      const base = byKey.get(g.key.slice(0, g.key.indexOf("#")));
      if (base !== undefined) g.moduleType = groups[base].moduleType;
    }
  }
  // counts bottom-up (children are created after parents, so reverse id order is post-order)
  for (let i = 0; i < n; i++) {
    const g = groups[leafGroup[i]];
    g.leafCount++;
    if (gm.region[i] >= 0 && !nodes[i].nonstrict_call) g.regionCount++;
    g.minIndex = Math.min(g.minIndex, i);
    g.maxIndex = Math.max(g.maxIndex, i);
  }
  for (let gid = groups.length - 1; gid > 0; gid--) {
    const g = groups[gid], p = groups[g.parent];
    p.leafCount += g.leafCount;
    p.regionCount += g.regionCount;
    p.minIndex = Math.min(p.minIndex, g.minIndex);
    p.maxIndex = Math.max(p.maxIndex, g.maxIndex);
  }
  if (tired(2047)) { yield; sliceStart = performance.now(); }
  // merge chains of single-child module groups ("transformer" > "h" becomes "transformer.h")
  for (const g of groups) {
    if (!g.dead && g.kind === "module" && g.parent >= 0) {
      while (g.children.length === 0 && g.groupChildren.length === 1) {
        const c = groups[g.groupChildren[0]];
        if (c.kind !== "module") break;
        g.label = `${g.label}.${c.label}`;
        g.key = c.key;
        g.moduleType = c.moduleType;
        g.children = c.children;
        g.groupChildren = c.groupChildren;
        for (const gc of g.groupChildren) groups[gc].parent = g.id;
        for (const i of g.children) leafGroup[i] = g.id;
        c.dead = true;
      }
    }
  }
  const tree = { groups, leafGroup, items: null, nonstrictCall: nodes.map((nd) => !!nd.nonstrict_call) };
  // ordered item lists: node i -> i, group g -> -(g + 1)
  const order = (g) => {
    if (!g.groupChildren.length) return g.children.slice(); // leaves only: already in node order
    const items = g.children.map((i) => ({ k: i, v: i }));
    for (const c of g.groupChildren) items.push({ k: groups[c].minIndex, v: -(c + 1) });
    items.sort((a, b) => a.k - b.k || a.v - b.v);
    return items.map((t) => t.v);
  };
  for (const g of groups) if (!g.dead) g.items = order(g);
  // split very wide levels into consecutive chunks
  const alive = groups.filter((g) => !g.dead);
  for (const g of alive) splitWide(tree, g, chunkLimit, chunkSize, gm.region);
  if (opts.fold !== false) foldSeries(gm, tree); // h.0 … h.15 of one structure: one series box
  fixDepths(groups);
  return tree;
}

/**
 * Fold identical blocks (layout/fold.js) of a tree built with `{fold: false}`: the same result
 * as building with folding, as a step of its own (the viewer runs it in its own task).
 */
export function foldTree(gm, tree) {
  foldSeries(gm, tree);
  fixDepths(tree.groups);
  return tree;
}

/** foldTree in slices of about `sliceMs`, `pause()` awaited between them. */
export async function foldTreeSliced(gm, tree, pause, sliceMs = 40) {
  await foldSeriesSliced(gm, tree, pause, sliceMs);
  fixDepths(tree.groups);
  return tree;
}

function lowestCommon(groups, a, b) {
  while (groups[a].depth > groups[b].depth) a = groups[a].parent;
  while (groups[b].depth > groups[a].depth) b = groups[b].parent;
  while (a !== b) { a = groups[a].parent; b = groups[b].parent; }
  return a;
}

function fixDepths(groups) {
  for (const g of groups) {
    if (g.dead) continue;
    let d = 0, p = g.parent;
    while (p >= 0) { d++; p = groups[p].parent; }
    g.depth = d;
  }
}

function splitWide(tree, g, limit, size, region) {
  const { groups, leafGroup } = tree;
  if (g.items.length <= limit) return;
  const chunks = [];
  for (let s = 0; s < g.items.length; s += size) chunks.push(g.items.slice(s, s + size));
  const newItems = [];
  for (const part of chunks) {
    const c = {
      id: groups.length, key: `${g.key}\u0000chunk:${groups.length}`, label: "", kind: "chunk", parent: g.id,
      depth: g.depth + 1, children: [], groupChildren: [], leafCount: 0, minIndex: Infinity, maxIndex: -1,
      moduleType: null, region: -1, regionCount: 0, items: part,
    };
    groups.push(c);
    for (const it of part) {
      if (it >= 0) {
        c.children.push(it); leafGroup[it] = c.id; c.leafCount++;
        if (region[it] >= 0 && !tree.nonstrictCall[it]) c.regionCount++;
        c.minIndex = Math.min(c.minIndex, it); c.maxIndex = Math.max(c.maxIndex, it);
      } else {
        const sub = groups[-it - 1];
        sub.parent = c.id; c.groupChildren.push(sub.id);
        c.leafCount += sub.leafCount; c.regionCount += sub.regionCount;
        c.minIndex = Math.min(c.minIndex, sub.minIndex); c.maxIndex = Math.max(c.maxIndex, sub.maxIndex);
      }
    }
    c.label = `nodes ${c.minIndex}–${c.maxIndex}`;
    newItems.push(-(c.id + 1));
  }
  g.children = [];
  g.groupChildren = newItems.map((v) => -v - 1);
  g.items = newItems;
  if (newItems.length > limit) splitWide(tree, g, limit, size, region);
}

/** Groups expanded at first: breadth-first while the number of visible boxes stays <= budget. */
export function initialExpansion(tree, budget = 400) {
  const expanded = new Set([ROOT]);
  let visible = tree.groups[ROOT].items.length;
  let frontier = [ROOT];
  while (frontier.length) {
    const next = [];
    const cands = [];
    for (const gid of frontier) for (const it of tree.groups[gid].items) if (it < 0) cands.push(-it - 1);
    // non-strict regions first (they are what the view is about), then smaller groups
    const rank = (g) => (tree.groups[g].kind === "region" ? 0 : 1);
    cands.sort((a, b) => rank(a) - rank(b) || tree.groups[a].items.length - tree.groups[b].items.length);
    for (const c of cands) {
      if (tree.groups[c].kind === "series") continue; // folded on purpose: opened by a click
      const extra = tree.groups[c].items.length - 1;
      if (visible + extra <= budget) {
        expanded.add(c);
        visible += extra;
        next.push(c);
      }
    }
    frontier = next;
  }
  return expanded;
}

/** Expand the ancestors of node `i` so that it is visible. Returns true if anything changed. */
export function revealNode(tree, expanded, i) {
  let g = tree.leafGroup[i];
  let changed = false;
  while (g >= 0) {
    if (!expanded.has(g)) { expanded.add(g); changed = true; }
    g = tree.groups[g].parent;
  }
  return changed;
}

/** The ancestors of group `gid` (not including itself), root first. */
export function ancestors(tree, gid) {
  const out = [];
  let p = tree.groups[gid].parent;
  while (p >= 0) { out.unshift(p); p = tree.groups[p].parent; }
  return out;
}

/**
 * For each group, the baseline graph (index into gm.baselineIds) most of its nodes would have
 * belonged to, or -1 (merged view colouring of collapsed groups). Cached on the tree.
 */
export function baselineMajority(tree, gm) {
  if (tree._baselineMajor) return tree._baselineMajor;
  const B = gm.baselineIds.length;
  const G = tree.groups.length;
  const major = new Int32Array(G).fill(-1);
  if (B) {
    const counts = new Int32Array(G * B);
    for (let i = 0; i < gm.n; i++) {
      const b = gm.baseline[i];
      if (b < 0) continue;
      for (let g = tree.leafGroup[i]; g >= 0; g = tree.groups[g].parent) counts[g * B + b]++;
    }
    for (let g = 0; g < G; g++) {
      let best = -1, bc = 0;
      for (let b = 0; b < B; b++) if (counts[g * B + b] > bc) { bc = counts[g * B + b]; best = b; }
      major[g] = best;
    }
  }
  tree._baselineMajor = major;
  return major;
}
