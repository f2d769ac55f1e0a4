// layout/view.js — geometry of what is visible: nested layout of expanded groups.
// Owns: which boxes are visible for a set of expanded groups, their sizes, absolute
//   positions (each expanded group laid out on its own, innermost first, like Model
//   Explorer), and the drawn edges with their routes. Pure function of (model, tree, set).
// Must not: draw, touch the DOM, or change the tree or the expansion set.

import { layeredLayout } from "./layered.js";
import { KIND_OUTPUT, tensorText } from "../contract/graphmodel.js";
import { nextTask } from "../nexttask.js";

export const NODE_H = 34;
export const GROUP_H = 50;
export const PAD = 14;
export const HEADER = 26;
const CHAR_W = 6.8;
const KEY = 2 ** 22; // > any box, group or port id

/** Width of a node box from its label and tensor text. */
export function nodeWidth(gm, i) {
  const label = gm.labels[i];
  const t = gm.nodes[i].tensors;
  const meta = t && t.length ? tensorText(t[0]).length * 0.9 : 0;
  const kind = gm.kind[i];
  const chars = Math.max(label.length, meta, kind === KIND_OUTPUT ? 6 : 0);
  return Math.min(230, Math.max(64, chars * CHAR_W + 24));
}

export function groupLabel(tree, gid) {
  const g = tree.groups[gid];
  return g.kind === "region" ? `non-strict · ${g.label}` : g.label;
}

/** The second line of a collapsed group's box: its size, module type, inlined nodes. */
export function groupSubtitle(tree, gid) {
  const g = tree.groups[gid];
  const inl = g.regionCount && g.kind !== "region" ? ` · ${g.regionCount} inlined` : "";
  if (g.kind === "series") return `${g.count} identical${g.moduleType ? " " + g.moduleType : ""} · ${g.each} nodes each${inl}`;
  return `${g.leafCount} nodes${g.moduleType ? " · " + g.moduleType : ""}${inl}`;
}

function groupWidth(tree, gid) {
  const sub = groupSubtitle(tree, gid);
  const chars = Math.max(groupLabel(tree, gid).length * 1.05, sub.length * 0.95);
  return Math.min(320, Math.max(130, chars * CHAR_W + 48));
}

/**
 * Lay out the visible part of a graph.
 * @returns {View}
 */
export function computeView(gm, tree, expanded, opts = {}) {
  const steps = viewSteps(gm, tree, expanded, opts, Infinity);
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

/**
 * The same layout in slices of about `sliceMs` of work, each in its own task, so a very big
 * expansion never blocks the page for long. Resolves with the view, or null if `isStale()`.
 */
export async function computeViewAsync(gm, tree, expanded, opts = {}, sliceMs = 40, isStale = () => false) {
  const steps = viewSteps(gm, tree, expanded, opts, sliceMs);
  let r = steps.next();
  while (!r.done) {
    await nextTask();
    if (isStale()) return null;
    r = steps.next();
  }
  return r.value;
}

/** Generator doing the work of computeView; yields when a slice of `sliceMs` is used up. */
function* viewSteps(gm, tree, expanded, opts, sliceMs) {
  let sliceStart = performance.now();
  const tired = () => sliceMs !== Infinity && performance.now() - sliceStart > sliceMs;
  const rest = () => { sliceStart = performance.now(); };
  const { n } = gm;
  const groups = tree.groups;
  const G = groups.length;
  // collapsed representative of each group (-1: the group itself is expanded and visible)
  const rep = new Int32Array(G).fill(-2);
  const grep = (g) => {
    if (rep[g] !== -2) return rep[g];
    const p = groups[g].parent;
    let r;
    if (p < 0) r = -1;
    else {
      const pr = grep(p);
      r = pr >= 0 ? pr : expanded.has(g) ? -1 : g;
    }
    rep[g] = r;
    return r;
  };
  const itemOf = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = grep(tree.leafGroup[i]);
    itemOf[i] = r >= 0 ? n + r : i;
  }
  const container = (it) => (it < n ? tree.leafGroup[it] : groups[it - n].parent);
  // Edges. Each drawn edge (between visible boxes a -> b) is routed through the layouts it
  // crosses: out of every expanded group around a through an output port at that group's
  // bottom, along the lowest common group's layout, and into every expanded group around b
  // through an input port at its top; ports are shared by edges with the same far end, so
  // edges bundle at group borders instead of crossing the nodes inside.
  const locals = new Map(); // gid -> {keys: Map, list: number[]}
  const localEdge = (gid, u, v) => {
    let L = locals.get(gid);
    if (!L) { L = { keys: new Map(), list: [] }; locals.set(gid, L); }
    const key = u * KEY + v; // numeric keys: no string garbage per edge
    let k = L.keys.get(key);
    if (k === undefined) { k = L.list.length >> 1; L.list.push(u, v); L.keys.set(key, k); }
    return k;
  };
  const ports = new Map(); // gid -> [{id, dir}]
  const portIds = new Map(); // "gid|dir|far" -> port item id
  let nextPort = n + G;
  const portFor = (gid, dir, far) => {
    const key = (gid * 3 + dir) * KEY + far;
    let id = portIds.get(key);
    if (id === undefined) {
      id = nextPort++;
      portIds.set(key, id);
      if (!ports.has(gid)) ports.set(gid, []);
      ports.get(gid).push({ id, dir });
    }
    return id;
  };
  const drawnKey = new Map();
  const drawn = []; // {a, b, lca, k, outHops, inHops, count}
  const stride = n + G;
  for (let v = 0; v < n; v++) {
    if ((v & 4095) === 0 && tired()) { yield; rest(); }
    for (let e = gm.inStart[v]; e < gm.inStart[v + 1]; e++) {
      const u = gm.inIdx[e];
      const a = itemOf[u], b = itemOf[v];
      if (a === b) continue;
      const dk = a * stride + b;
      const seen = drawnKey.get(dk);
      if (seen !== undefined) { drawn[seen].count++; continue; }
      let ca = a, pa = container(a), cb = b, pb = container(b);
      const upA = [], upB = [];
      while (groups[pa].depth > groups[pb].depth) { upA.push(pa, ca); ca = n + pa; pa = groups[pa].parent; }
      while (groups[pb].depth > groups[pa].depth) { upB.push(pb, cb); cb = n + pb; pb = groups[pb].parent; }
      while (pa !== pb) {
        upA.push(pa, ca); ca = n + pa; pa = groups[pa].parent;
        upB.push(pb, cb); cb = n + pb; pb = groups[pb].parent;
      }
      const outHops = [];
      for (let j = 0; j < upA.length; j += 2) {
        const gid = upA[j], child = upA[j + 1];
        const port = portFor(gid, 2, cb);
        outHops.push(gid, localEdge(gid, child, port), port);
      }
      const inHops = [];
      for (let j = upB.length - 2; j >= 0; j -= 2) {
        const gid = upB[j], child = upB[j + 1];
        const port = portFor(gid, 1, ca);
        inHops.push(gid, localEdge(gid, port, child), port);
      }
      drawnKey.set(dk, drawn.length);
      drawn.push({ a, b, lca: pa, k: localEdge(pa, ca, cb), outHops, inHops, count: 1 });
    }
  }
  // nested layout, innermost first
  const sizeW = new Float64Array(n + G), sizeH = new Float64Array(n + G);
  const layouts = new Map(); // gid -> {items, pos, res}
  let layoutCount = 0;
  const layoutGroup = function* (gid) {
    const g = groups[gid];
    const items = g.items.map((it) => (it >= 0 ? it : n + (-it - 1)));
    const gp = ports.get(gid) || [];
    const total = items.length + gp.length;
    const pos = new Map();
    const w = new Float64Array(total), h = new Float64Array(total);
    const pin = gp.length ? new Int8Array(total) : null;
    for (let idx = 0; idx < items.length; idx++) {
      const it = items[idx];
      pos.set(it, idx);
      if (it < n) { sizeW[it] = nodeWidth(gm, it); sizeH[it] = NODE_H; }
      else {
        const c = it - n;
        if (expanded.has(c)) yield* layoutGroup(c);
        else { sizeW[it] = groupWidth(tree, c); sizeH[it] = GROUP_H; }
      }
      w[idx] = sizeW[it]; h[idx] = sizeH[it];
    }
    gp.forEach((p, j) => {
      const idx = items.length + j;
      pos.set(p.id, idx);
      w[idx] = 6; h[idx] = 2;
      pin[idx] = p.dir;
    });
    const le = (locals.get(gid) || { list: [] }).list;
    const edges = new Int32Array(le.length);
    for (let k = 0; k < le.length; k++) edges[k] = pos.get(le[k]);
    const res = layeredLayout({ count: total, w, h, edges, pin }, { vgap: gp.length ? 24 : 30, ...opts.layout });
    layoutCount += total;
    layouts.set(gid, { items, pos, res });
    const pad = gid === 0 ? 0 : PAD;
    const head = gid === 0 ? 0 : HEADER - (gp.some((p) => p.dir === 1) ? 12 : 0);
    sizeW[n + gid] = Math.max(res.width + 2 * pad, gid === 0 ? 0 : groupWidth(tree, gid));
    sizeH[n + gid] = res.height + head + pad - (gp.some((p) => p.dir === 2) ? 8 : 0);
    if (tired()) { yield; rest(); }
  };
  yield* layoutGroup(0);
  // absolute positions
  const boxes = []; // {item, x, y, w, h}
  const boxOf = new Map();
  const offsets = new Map(); // gid -> [ox, oy] of the content origin
  const place = function* (gid, ox, oy) {
    const { items, res } = layouts.get(gid);
    const gp = ports.get(gid) || [];
    const pad = gid === 0 ? 0 : PAD;
    const head = gid === 0 ? 0 : HEADER - (gp.some((p) => p.dir === 1) ? 12 : 0);
    const inner = sizeW[n + gid] - 2 * pad;
    const cx = ox + pad + (inner - res.width) / 2;
    const cy = oy + head;
    offsets.set(gid, [cx, cy]);
    for (let idx = 0; idx < items.length; idx++) {
      const it = items[idx];
      const x = cx + res.x[idx] - sizeW[it] / 2;
      const y = cy + res.y[idx] - sizeH[it] / 2;
      boxOf.set(it, boxes.length);
      boxes.push({ item: it, x, y, w: sizeW[it], h: sizeH[it] });
      if (it >= n && expanded.has(it - n)) yield* place(it - n, x, y);
    }
    if (tired()) { yield; rest(); }
  };
  yield* place(0, 0, 0);
  // drawn edge routes, hop by hop
  const pushRoute = (pts, gid, k) => {
    const route = layouts.get(gid).res.routes[k];
    if (!route) return;
    const [ox, oy] = offsets.get(gid);
    for (let j = 0; j < route.length; j += 2) pts.push(route[j] + ox, route[j + 1] + oy);
  };
  const pushPort = (pts, gid, port) => {
    const L = layouts.get(gid);
    const idx = L.pos.get(port);
    const [ox, oy] = offsets.get(gid);
    pts.push(L.res.x[idx] + ox, L.res.y[idx] + oy);
  };
  const edges = new Array(drawn.length);
  for (let k = 0; k < drawn.length; k++) {
    if ((k & 2047) === 0 && tired()) { yield; rest(); }
    const d = drawn[k];
    const A = boxes[boxOf.get(d.a)], B = boxes[boxOf.get(d.b)];
    const pts = [A.x + A.w / 2, A.y + A.h];
    for (let j = 0; j < d.outHops.length; j += 3) {
      pushRoute(pts, d.outHops[j], d.outHops[j + 1]);
      pushPort(pts, d.outHops[j], d.outHops[j + 2]);
    }
    pushRoute(pts, d.lca, d.k);
    for (let j = 0; j < d.inHops.length; j += 3) {
      pushPort(pts, d.inHops[j], d.inHops[j + 2]);
      pushRoute(pts, d.inHops[j], d.inHops[j + 1]);
    }
    pts.push(B.x + B.w / 2, B.y);
    edges[k] = { a: d.a, b: d.b, count: d.count, pts };
  }
  return {
    n, boxes, boxOf, itemOf, edges, width: sizeW[n], height: sizeH[n], layoutCount,
    isGroup: (it) => it >= n, groupOf: (it) => it - n,
  };
}
