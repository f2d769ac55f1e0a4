// layout/layered.js — layered (Sugiyama-style) layout specialised for FX graphs, O(N + E + D).
// Owns: layers by longest path over the given node order (FX graphs are topologically
//   ordered, so no cycle removal search is needed; edges against the order are ignored for
//   layering), late placement of inputs, dummy nodes for long edges, barycentric ordering
//   sweeps, and coordinates by isotonic regression (minimal movement under separation).
// Must not: know about Reports, groups, the DOM or drawing; it sees boxes and edges only.

const DUMMY_W = 6;
const LANE_GAP = 8; // between the lanes of long edges into output ports

/**
 * @param {object} g
 * @param {number} g.count  number of boxes; box index order is the topological order
 * @param {ArrayLike<number>} g.w  box widths
 * @param {ArrayLike<number>} g.h  box heights
 * @param {ArrayLike<number>} g.edges  flat [u0, v0, u1, v1, ...]
 * @param {object} [opts]
 * @returns {{x: Float64Array, y: Float64Array, width: number, height: number, layer: Int32Array,
 *   routes: Array<number[]|null>}}  x/y are box centres; routes[k] are the bend points of edge k.
 */
export function layeredLayout(g, opts = {}) {
  const n = g.count;
  const hgap = opts.hgap ?? 18;
  const vgap = opts.vgap ?? 30;
  const sweeps = opts.sweeps ?? 4;
  const maxDummies = opts.maxDummies ?? 8 * n + 2000;
  const E = g.edges.length >> 1;

  // topological order (Kahn, ties and cycles broken by box order: FX order is already
  // topological for nodes, but groups and hoisted inputs can come out of order)
  const pos = topoPositions(n, g.edges);
  const fwd = (u, v) => pos[u] < pos[v];
  const order = new Int32Array(n);
  for (let v = 0; v < n; v++) order[pos[v]] = v;
  // adjacency (forward edges only)
  const predCount = new Int32Array(n);
  const succCount = new Int32Array(n);
  for (let k = 0; k < E; k++) {
    const u = g.edges[2 * k], v = g.edges[2 * k + 1];
    if (fwd(u, v)) { succCount[u]++; predCount[v]++; }
  }
  // longest path layering
  const layer = new Int32Array(n);
  const predStart = prefix(predCount);
  const preds = new Int32Array(predStart[n]);
  const succStart = prefix(succCount);
  const succs = new Int32Array(succStart[n]);
  {
    const pf = predStart.slice(0, n), sf = succStart.slice(0, n);
    for (let k = 0; k < E; k++) {
      const u = g.edges[2 * k], v = g.edges[2 * k + 1];
      if (fwd(u, v)) { preds[pf[v]++] = u; succs[sf[u]++] = v; }
    }
  }
  for (let oi = 0; oi < n; oi++) {
    const v = order[oi];
    let l = 0;
    for (let k = predStart[v]; k < predStart[v + 1]; k++) l = Math.max(l, layer[preds[k]] + 1);
    layer[v] = l;
  }
  // as late as possible: inputs, parameters and their transposes/views sit just above their
  // first consumer instead of piling up in the top layers (the critical path is unchanged)
  const pin = g.pin || null; // 1: top layer (a group's input port), 2: bottom layer (output port)
  for (let oi = n - 1; oi >= 0; oi--) {
    const v = order[oi];
    if (succStart[v + 1] === succStart[v] || (pin && pin[v] === 1)) continue;
    let m = Infinity;
    for (let k = succStart[v]; k < succStart[v + 1]; k++) m = Math.min(m, layer[succs[k]]);
    if (m - 1 > layer[v]) layer[v] = m - 1;
  }
  let L = 0;
  if (pin) {
    let top = false, bottom = false;
    for (let v = 0; v < n; v++) { if (pin[v] === 1) top = true; if (pin[v] === 2) bottom = true; }
    // Input ports own the top row. Only nodes still in it move down one: the longest path
    // already puts every node fed by a port below it, and shifting those too left an empty
    // row (dummies only) under the ports of every group, stacking up in nested groups.
    if (top) {
      for (let oi = 0; oi < n; oi++) {
        const v = order[oi];
        if (pin[v] === 1) continue;
        let l = Math.max(layer[v], 1);
        for (let k = predStart[v]; k < predStart[v + 1]; k++) l = Math.max(l, layer[preds[k]] + 1);
        layer[v] = l;
      }
    }
    for (let v = 0; v < n; v++) if (pin[v] !== 2) L = Math.max(L, layer[v] + 1);
    if (bottom) {
      for (let v = 0; v < n; v++) if (pin[v] === 2) layer[v] = L;
      L += 1;
    }
  } else {
    for (let v = 0; v < n; v++) L = Math.max(L, layer[v] + 1);
  }

  // virtual nodes: real boxes 0..n-1, dummies after
  let dummyBudget = maxDummies;
  const vLayer = Array.from(layer);
  const vW = Array.from(g.w);
  const vKey = [];
  for (let v = 0; v < n; v++) vKey.push(pos[v]);
  const chains = new Array(E).fill(null); // edge -> list of dummy ids
  const segU = [], segV = []; // adjacent-layer segments between virtual nodes
  // Long edges into an output port (a block's values returned at the group's bottom) run down a
  // lane right of the boxes instead of through dummies between them: each such chain pushed
  // the boxes of every later row aside, so a stack of blocks drifted into a wide staircase.
  const bus = [];
  for (let k = 0; k < E; k++) {
    const u = g.edges[2 * k], v = g.edges[2 * k + 1];
    if (!fwd(u, v)) continue;
    const span = layer[v] - layer[u];
    if (span > 1 && pin && pin[v] === 2) { bus.push(k); continue; }
    if (span > 1 && span - 1 <= dummyBudget) {
      dummyBudget -= span - 1;
      const chain = [];
      let prev = u;
      for (let l = layer[u] + 1; l < layer[v]; l++) {
        const d = vLayer.length;
        vLayer.push(l); vW.push(DUMMY_W); vKey.push(pos[u] + 0.5);
        chain.push(d);
        segU.push(prev); segV.push(d);
        prev = d;
      }
      segU.push(prev); segV.push(v);
      chains[k] = chain;
    } else if (span === 1) {
      segU.push(u); segV.push(v);
    }
  }
  const V = vLayer.length;
  const S = segU.length;
  // segment adjacency
  const upCount = new Int32Array(V), downCount = new Int32Array(V);
  for (let s = 0; s < S; s++) { downCount[segU[s]]++; upCount[segV[s]]++; }
  const upStart = prefix(upCount), downStart = prefix(downCount);
  const up = new Int32Array(S), down = new Int32Array(S);
  {
    const uf = upStart.slice(0, V), df = downStart.slice(0, V);
    for (let s = 0; s < S; s++) { down[df[segU[s]]++] = segV[s]; up[uf[segV[s]]++] = segU[s]; }
  }
  // layers (initial order: node order, dummies next to their source)
  const layers = Array.from({ length: L }, () => []);
  const ids = Array.from({ length: V }, (_, i) => i).sort((a, b) => vKey[a] - vKey[b] || a - b);
  for (const v of ids) layers[vLayer[v]].push(v);
  const x = new Float64Array(V);
  const pack = (row) => {
    let cx = 0;
    for (const v of row) { x[v] = cx + vW[v] / 2; cx += vW[v] + hgap; }
    const shift = (cx - hgap) / 2;
    for (const v of row) x[v] -= shift;
  };
  for (const row of layers) pack(row);

  const bary = new Float64Array(V);
  const orderBy = (row, start, list) => {
    for (const v of row) {
      const a = start[v], b = start[v + 1];
      if (b > a) {
        let s = 0;
        for (let k = a; k < b; k++) s += x[list[k]];
        bary[v] = s / (b - a);
      } else bary[v] = x[v];
    }
    row.sort((p, q) => bary[p] - bary[q]);
    pack(row);
  };
  for (let it = 0; it < sweeps; it++) {
    if (it % 2 === 0) for (let l = 1; l < L; l++) orderBy(layers[l], upStart, up);
    else for (let l = L - 2; l >= 0; l--) orderBy(layers[l], downStart, down);
  }
  // coordinates: pull each box toward the mean of its neighbours, keeping order and gaps
  const desired = new Float64Array(V);
  const place = (row, start, list, both) => {
    for (const v of row) {
      let s = 0, c = 0;
      for (let k = start[v]; k < start[v + 1]; k++) { s += x[list[k]]; c++; }
      if (both) for (let k = downStart[v]; k < downStart[v + 1]; k++) { s += x[down[k]]; c++; }
      desired[v] = c ? s / c : x[v];
    }
    isotonic(row, desired, vW, hgap, x);
  };
  for (let it = 0; it < 6; it++) {
    if (it % 2 === 0) for (let l = 1; l < L; l++) place(layers[l], upStart, up, false);
    else for (let l = L - 2; l >= 0; l--) place(layers[l], downStart, down, false);
  }
  for (let l = 0; l < L; l++) place(layers[l], upStart, up, true);

  // vertical positions
  const layerH = new Float64Array(L);
  for (let v = 0; v < n; v++) layerH[layer[v]] = Math.max(layerH[layer[v]], g.h[v]);
  const layerTop = new Float64Array(L);
  let topPins = false, bottomPins = false;
  if (pin) for (let v = 0; v < n; v++) { if (pin[v] === 1) topPins = true; if (pin[v] === 2) bottomPins = true; }
  const portGap = opts.portGap ?? 10;
  let cy = 0;
  for (let l = 0; l < L; l++) {
    if (layerH[l] === 0) layerH[l] = 8; // a layer of dummies only
    layerTop[l] = cy;
    const gap = (l === 0 && topPins) || (l === L - 2 && bottomPins) ? portGap : vgap;
    cy += layerH[l] + (l < L - 1 ? gap : 0);
  }
  const height = cy;
  let minX = Infinity, maxX = -Infinity;
  for (let v = 0; v < V; v++) {
    minX = Math.min(minX, x[v] - vW[v] / 2);
    maxX = Math.max(maxX, x[v] + vW[v] / 2);
  }
  if (!isFinite(minX)) { minX = 0; maxX = 0; }
  const lanes = new Map(); // output port -> x of its lane
  if (bus.length) {
    let lx = maxX + hgap;
    for (const k of bus) {
      const v = g.edges[2 * k + 1];
      if (!lanes.has(v)) { lanes.set(v, lx); x[v] = lx; lx += LANE_GAP; }
    }
    maxX = Math.max(maxX, lx - LANE_GAP + DUMMY_W / 2);
  }
  const outX = new Float64Array(n), outY = new Float64Array(n);
  for (let v = 0; v < n; v++) {
    outX[v] = x[v] - minX;
    outY[v] = layerTop[layer[v]] + layerH[layer[v]] / 2;
  }
  const routes = new Array(E).fill(null);
  for (let k = 0; k < E; k++) {
    const chain = chains[k];
    if (!chain) continue;
    const pts = [];
    for (const d of chain) {
      const l = vLayer[d];
      pts.push(x[d] - minX, layerTop[l] - vgap * 0.15, x[d] - minX, layerTop[l] + layerH[l] + vgap * 0.15);
    }
    routes[k] = pts;
  }
  for (const k of bus) {
    const u = g.edges[2 * k], lu = layer[u];
    const lx = lanes.get(g.edges[2 * k + 1]) - minX;
    const below = layerTop[lu] + layerH[lu] + ((lu === 0 && topPins) ? portGap : vgap) / 2; // in the gap under u's row
    routes[k] = [lx, below, lx, layerTop[L - 1] - portGap / 2];
  }
  return { x: outX, y: outY, width: maxX - minX, height, layer, routes, layers: L };
}

/** Position of each box in a topological order; ties and cycles resolved by box index. */
export function topoPositions(n, edges) {
  const E = edges.length >> 1;
  const indeg = new Int32Array(n);
  const outCount = new Int32Array(n);
  for (let k = 0; k < E; k++) { outCount[edges[2 * k]]++; indeg[edges[2 * k + 1]]++; }
  const start = prefix(outCount);
  const out = new Int32Array(E);
  const fill = start.slice(0, n);
  for (let k = 0; k < E; k++) out[fill[edges[2 * k]]++] = edges[2 * k + 1];
  const pos = new Int32Array(n).fill(-1);
  // a binary heap keyed by box index keeps the result close to the given order
  const heap = [];
  const push = (v) => {
    heap.push(v);
    let i = heap.length - 1;
    while (i > 0) { const p = (i - 1) >> 1; if (heap[p] <= v) break; heap[i] = heap[p]; i = p; }
    heap[i] = v;
  };
  const pop = () => {
    const top = heap[0], last = heap.pop();
    if (heap.length) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        let mv = last;
        if (l < heap.length && heap[l] < mv) { m = l; mv = heap[l]; }
        if (r < heap.length && heap[r] < mv) { m = r; }
        if (m === i) break;
        heap[i] = heap[m]; i = m;
      }
      heap[i] = last;
    }
    return top;
  };
  for (let v = 0; v < n; v++) if (indeg[v] === 0) push(v);
  let next = 0, scan = 0;
  while (next < n) {
    if (!heap.length) {
      // a cycle: take the first unplaced box in the given order and ignore its open in-edges
      while (pos[scan] >= 0) scan++;
      indeg[scan] = 0;
      push(scan);
    }
    const v = pop();
    if (pos[v] >= 0) continue;
    pos[v] = next++;
    for (let k = start[v]; k < start[v + 1]; k++) {
      const w = out[k];
      if (pos[w] < 0 && --indeg[w] === 0) push(w);
    }
  }
  return pos;
}

function prefix(counts) {
  const out = new Int32Array(counts.length + 1);
  for (let i = 0; i < counts.length; i++) out[i + 1] = out[i] + counts[i];
  return out;
}

/**
 * Minimal squared movement of the boxes of `row` (in order) toward `desired`, subject to
 * x[i+1] - x[i] >= (w[i] + w[i+1]) / 2 + gap (pool-adjacent-violators on shifted values).
 */
export function isotonic(row, desired, w, gap, x) {
  const m = row.length;
  if (!m) return;
  const off = new Float64Array(m);
  for (let i = 1; i < m; i++) off[i] = off[i - 1] + (w[row[i - 1]] + w[row[i]]) / 2 + gap;
  const sum = new Float64Array(m), cnt = new Int32Array(m);
  let top = -1;
  for (let i = 0; i < m; i++) {
    top++;
    sum[top] = desired[row[i]] - off[i];
    cnt[top] = 1;
    while (top > 0 && sum[top - 1] / cnt[top - 1] > sum[top] / cnt[top]) {
      sum[top - 1] += sum[top];
      cnt[top - 1] += cnt[top];
      top--;
    }
  }
  let i = 0;
  for (let b = 0; b <= top; b++) {
    const mean = sum[b] / cnt[b];
    for (let c = 0; c < cnt[b]; c++, i++) x[row[i]] = mean + off[i];
  }
}
