// render/canvas.js — draws a laid-out view on a <canvas> (2D), with camera, culling and LOD.
// Owns: the canvas element, device-pixel-ratio sizing, the camera (scale + translation),
//   drawing boxes/edges/labels from geometry, hit testing through a uniform grid, and frame
//   time statistics.
// Must not: lay out, decide what is visible/expanded, or hold UI state beyond the camera
//   and what it was told to highlight. Input handling lives in interaction/panzoom.js.

import { KIND_ATTR, KIND_INPUT, KIND_NONSTRICT, KIND_OUTPUT, tensorText } from "../contract/graphmodel.js";
import { cutMiddle } from "../contract/names.js";
import { groupLabel, groupSubtitle, HEADER } from "../layout/view.js";
import { baselineMajority } from "../layout/groups.js";
import { graphColor, readTheme, regionColor } from "./theme.js";

const CELL = 256;

export class GraphCanvas {
  constructor(host) {
    this.host = host;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "nsv-canvas";
    this.canvas.setAttribute("tabindex", "0");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", "graph view");
    host.appendChild(this.canvas);
    this.ctx = this.canvas.getContext("2d");
    this.cam = { k: 1, tx: 0, ty: 0 };
    this._autoView = null; // "home" | "fit" while the camera is where one of them put it
    this.scene = null;
    this.theme = readTheme(host);
    this.frameTimes = [];
    this.lastStats = { drawn: 0, edges: 0 };
    this._raf = 0;
    this.W = 0; this.H = 0;
    this._ro = new ResizeObserver(() => this.resize());
    this._ro.observe(host);
    this.resize();
  }

  destroy() {
    this._ro.disconnect();
    cancelAnimationFrame(this._raf);
    this.canvas.remove();
  }

  refreshTheme() {
    this.theme = readTheme(this.host);
    this.invalidate();
  }

  resize() {
    const r = this.host.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    const W = Math.max(1, Math.floor(r.width)), H = Math.max(1, Math.floor(r.height));
    if (W === this.W && H === this.H && dpr === this.dpr) return;
    this.W = W; this.H = H; this.dpr = dpr;
    this.canvas.width = Math.floor(W * dpr);
    this.canvas.height = Math.floor(H * dpr);
    this.canvas.style.width = W + "px";
    this.canvas.style.height = H + "px";
    // a first view taken before the host had its size (a loaded page lays out late) is taken
    // again at the real size, as long as the person has not moved the camera since
    if (this._autoView) this[this._autoView]();
    this.drawNow();
  }

  /** Set what to draw. scene: {gm, tree, view, expanded, colorMode, hits:Set, current, selected} */
  setScene(scene) {
    this.scene = scene;
    this.theme = readTheme(this.host); // the host is attached by now (not at construction)
    const v = scene.view;
    // edge bounding boxes and the hit grid
    const eb = new Float64Array(v.edges.length * 4);
    v.edges.forEach((e, k) => {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (let j = 0; j < e.pts.length; j += 2) {
        x0 = Math.min(x0, e.pts[j]); x1 = Math.max(x1, e.pts[j]);
        y0 = Math.min(y0, e.pts[j + 1]); y1 = Math.max(y1, e.pts[j + 1]);
      }
      eb[4 * k] = x0; eb[4 * k + 1] = y0; eb[4 * k + 2] = x1; eb[4 * k + 3] = y1;
    });
    this.edgeBox = eb;
    this.grid = null; // built on the first hit test (keeps a big relayout's task short)
    if (this.minimap) {
      // the miniature of a big scene is drawn in a later task, not in the one that laid it out
      if (scene.view.boxes.length > 5000) {
        clearTimeout(this._miniT);
        this._miniT = setTimeout(() => { if (this.scene === scene) { this.minimap.setScene(scene, this.theme); this.minimap.draw(); } }, 30);
      } else this.minimap.setScene(scene, this.theme);
    }
    this.invalidate();
  }

  buildGrid() {
    const scene = this.scene;
    const v = scene.view;
    const grid = new Map();
    v.boxes.forEach((b, idx) => {
      const exp = b.item >= v.n && scene.expanded.has(b.item - v.n);
      const y1 = exp ? b.y + HEADER : b.y + b.h;
      for (let cx = Math.floor(b.x / CELL); cx <= Math.floor((b.x + b.w) / CELL); cx++) {
        for (let cy = Math.floor(b.y / CELL); cy <= Math.floor(y1 / CELL); cy++) {
          const key = cx * 1e6 + cy;
          let list = grid.get(key);
          if (!list) grid.set(key, (list = []));
          list.push(idx);
        }
      }
    });
    this.grid = grid;
  }

  /** Box index under the screen point (x, y) (CSS pixels, relative to canvas), or -1. */
  hitTest(sx, sy) {
    if (!this.scene) return -1;
    const { k, tx, ty } = this.cam;
    const wx = (sx - tx) / k, wy = (sy - ty) / k;
    if (!this.grid) this.buildGrid();
    const list = this.grid.get(Math.floor(wx / CELL) * 1e6 + Math.floor(wy / CELL));
    if (!list) return -1;
    const v = this.scene.view;
    let best = -1;
    for (const idx of list) {
      const b = v.boxes[idx];
      const exp = b.item >= v.n && this.scene.expanded.has(b.item - v.n);
      const y1 = exp ? b.y + HEADER : b.y + b.h;
      if (wx >= b.x && wx <= b.x + b.w && wy >= b.y && wy <= y1) best = Math.max(best, idx); // innermost wins
    }
    return best;
  }

  worldToScreen(x, y) {
    return [x * this.cam.k + this.cam.tx, y * this.cam.k + this.cam.ty];
  }

  setCamera(k, tx, ty) {
    this._autoView = null;
    this.cam = { k: Math.min(4, Math.max(0.005, k)), tx, ty };
    if (this.onCamera) this.onCamera();
    this.invalidate();
  }

  zoomAt(factor, sx, sy) {
    const { k, tx, ty } = this.cam;
    const nk = Math.min(4, Math.max(0.005, k * factor));
    const f = nk / k;
    this.setCamera(nk, sx - (sx - tx) * f, sy - (sy - ty) * f);
  }

  panBy(dx, dy) {
    this.setCamera(this.cam.k, this.cam.tx + dx, this.cam.ty + dy);
  }

  /** Fit the whole view (or a world rectangle) into the canvas. */
  fit(rect) {
    if (!this.scene) return;
    const v = this.scene.view;
    const r = rect || { x: 0, y: 0, w: v.width, h: v.height };
    const m = 24;
    const k = Math.min((this.W - 2 * m) / Math.max(r.w, 1), (this.H - 2 * m) / Math.max(r.h, 1), 1.5);
    this.setCamera(k, (this.W - r.w * k) / 2 - r.x * k, (this.H - r.h * k) / 2 - r.y * k);
    if (!rect) this._autoView = "fit";
  }

  /** First view: readable scale, top of the graph, centred horizontally. */
  home() {
    if (!this.scene) return;
    const v = this.scene.view;
    const m = 24;
    const fitAll = Math.min((this.W - 2 * m) / Math.max(v.width, 1), (this.H - 2 * m) / Math.max(v.height, 1));
    // the whole graph when it is readable that way, else a readable scale from the top
    let k = fitAll >= 0.75 ? Math.min(1.2, fitAll) : Math.min(1, Math.max(0.75, (this.W - 2 * m) / Math.max(v.width, 1)));
    let tx = (this.W - v.width * k) / 2;
    if (v.width * k > this.W - 2 * m) {
      // wider than the canvas: centre on the first box at the top (where reading starts)
      let top = null;
      for (const b of v.boxes) if (!top || b.y < top.y - 1 || (Math.abs(b.y - top.y) <= 1 && b.x < top.x)) top = b;
      tx = top ? this.W / 2 - (top.x + top.w / 2) * k : m;
      tx = Math.min(m, Math.max(this.W - m - v.width * k, tx));
    }
    const ty = v.height * k < this.H - 2 * m ? (this.H - v.height * k) / 2 : m;
    this.setCamera(k, tx, ty);
    this._autoView = "home";
  }

  /** Centre the camera on a world rectangle, zooming in to a readable scale if needed. */
  focus(b, minK = 0.8) {
    const k = Math.max(this.cam.k, minK);
    this.setCamera(k, this.W / 2 - (b.x + b.w / 2) * k, this.H / 2 - (b.y + b.h / 2) * k);
  }

  invalidate() {
    if (this._raf) return;
    this._raf = requestAnimationFrame(() => {
      this._raf = 0;
      this.drawNow();
    });
  }

  drawNow() {
    const t0 = performance.now();
    this._draw();
    if (this.minimap) this.minimap.draw();
    const dt = performance.now() - t0;
    this.frameTimes.push(dt);
    if (this.frameTimes.length > 240) this.frameTimes.shift();
  }

  _draw() {
    const ctx = this.ctx, th = this.theme;
    const dpr = this.dpr || 1;
    fontNow = ""; // a resized canvas starts from the default font
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = th.bg;
    ctx.fillRect(0, 0, this.W, this.H);
    const s = this.scene;
    if (!s) return;
    const { k, tx, ty } = this.cam;
    const v = s.view, gm = s.gm, n = v.n;
    const vx0 = -tx / k, vy0 = -ty / k, vx1 = (this.W - tx) / k, vy1 = (this.H - ty) / k;
    ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * tx, dpr * ty);
    const px = 1 / k; // one screen pixel in world units
    const detail = k >= 0.42;
    const tiny = k < 0.12;
    const boxes = v.boxes;
    const visible = [];
    for (let idx = 0; idx < boxes.length; idx++) {
      const b = boxes[idx];
      if (b.x > vx1 || b.x + b.w < vx0 || b.y > vy1 || b.y + b.h < vy0) continue;
      visible.push(idx);
    }
    // 1. expanded group frames
    for (const idx of visible) {
      const b = boxes[idx];
      if (b.item < n || !s.expanded.has(b.item - n)) continue;
      const g = s.tree.groups[b.item - n];
      const isRegion = g.kind === "region";
      ctx.fillStyle = isRegion ? th.regionBg : th.group;
      ctx.strokeStyle = isRegion ? regionColor(g.region) : th.groupBorder;
      ctx.lineWidth = (isRegion ? 1.6 : 1) * px;
      roundRect(ctx, b.x, b.y, b.w, b.h, 8);
      ctx.fill();
      ctx.stroke();
      if (s.selectedBox === idx) { ctx.strokeStyle = th.select; ctx.lineWidth = 2.5 * px; ctx.stroke(); }
    }
    // 2. edges
    const eb = this.edgeBox;
    const sel = s.selectedItem ?? -1;
    ctx.lineWidth = Math.max(1, 1.1 * px) * (tiny ? 0.8 : 1);
    ctx.strokeStyle = th.edge;
    ctx.beginPath();
    let drawnEdges = 0;
    const hot = [];
    const toOutput = [];
    for (let e = 0; e < v.edges.length; e++) {
      if (eb[4 * e] > vx1 || eb[4 * e + 2] < vx0 || eb[4 * e + 1] > vy1 || eb[4 * e + 3] < vy0) continue;
      const ed = v.edges[e];
      if (ed.a === sel || ed.b === sel) { hot.push(ed); continue; }
      // values returned for the backward (edges into the output node) stay in the background
      if (ed.b < n && gm.kind[ed.b] === KIND_OUTPUT) { toOutput.push(ed); continue; }
      tracePath(ctx, ed.pts, tiny);
      drawnEdges++;
    }
    ctx.stroke();
    if (toOutput.length) {
      ctx.save();
      ctx.globalAlpha = 0.3;
      ctx.beginPath();
      for (const ed of toOutput) tracePath(ctx, ed.pts, tiny);
      ctx.stroke();
      ctx.restore();
      drawnEdges += toOutput.length;
    }
    if (detail) {
      ctx.fillStyle = th.edge;
      ctx.beginPath();
      for (let e = 0; e < v.edges.length; e++) {
        if (eb[4 * e + 2] < vx0 || eb[4 * e] > vx1 || eb[4 * e + 3] < vy0 || eb[4 * e + 1] > vy1) continue;
        const p = v.edges[e].pts;
        arrow(ctx, p[p.length - 2], p[p.length - 1], 4.5);
      }
      ctx.fill();
    }
    if (hot.length) {
      ctx.strokeStyle = th.select;
      ctx.lineWidth = Math.max(2, 2 * px);
      ctx.beginPath();
      for (const ed of hot) tracePath(ctx, ed.pts, false);
      ctx.stroke();
      ctx.fillStyle = th.select;
      ctx.beginPath();
      for (const ed of hot) arrow(ctx, ed.pts[ed.pts.length - 2], ed.pts[ed.pts.length - 1], 5.5);
      ctx.fill();
    }
    // 3. boxes
    let drawn = 0;
    for (const idx of visible) {
      const b = boxes[idx];
      const it = b.item;
      if (it >= n && s.expanded.has(it - n)) continue;
      drawn++;
      if (it < n) this._node(ctx, s, gm, it, b, detail, tiny, px);
      else this._group(ctx, s, it - n, b, detail, px);
      if (s.selectedBox === idx) {
        ctx.strokeStyle = th.select;
        ctx.lineWidth = 3 * px;
        roundRect(ctx, b.x - 3 * px, b.y - 3 * px, b.w + 6 * px, b.h + 6 * px, 8);
        ctx.stroke();
      }
    }
    // 4. labels of expanded frames (on top, so they stay readable)
    if (detail) {
      ctx.textBaseline = "middle";
      for (const idx of visible) {
        const b = boxes[idx];
        if (b.item < n || !s.expanded.has(b.item - n)) continue;
        const gid = b.item - n;
        const g = s.tree.groups[gid];
        setFont(ctx, `600 11px ${th.font}`);
        ctx.fillStyle = g.kind === "region" ? regionColor(g.region) : th.muted;
        const label = `▾ ${groupLabel(s.tree, gid)}${g.moduleType ? "  ·  " + g.moduleType : ""}`;
        ctx.fillText(fitText(label, b.w - 20), b.x + 10, b.y + 13);
      }
    }
    this.lastStats = { drawn, edges: drawnEdges + hot.length, k };
  }

  _node(ctx, s, gm, i, b, detail, tiny, px) {
    const th = this.theme;
    if (gm.nodes[i].band) { drawBand(ctx, th, gm.nodes[i].band, b, detail, px); return; }
    const kind = gm.kind[i];
    const r = gm.region[i];
    let fill = th.node, stroke = th.nodeBorder, text = th.fg, lw = 1, dash = null;
    if (s.colorMode === "baseline") {
      const bg = gm.baseline[i];
      if (bg >= 0) { fill = withAlpha(graphColor(bg), th.dark ? 0.35 : 0.22); stroke = graphColor(bg); lw = 1.5; }
    } else if (r >= 0) {
      fill = withAlpha(regionColor(r), th.dark ? 0.35 : 0.2); stroke = regionColor(r); lw = 1.8;
    }
    if (kind === KIND_INPUT) { stroke = th.input; fill = withAlpha(th.input, th.dark ? 0.2 : 0.1); lw = 1.5; }
    else if (kind === KIND_OUTPUT) { fill = th.output; stroke = th.output; text = th.dark ? "#0b1220" : "#ffffff"; }
    else if (kind === KIND_ATTR) { stroke = th.attr; dash = [4, 3]; fill = th.node; }
    else if (kind === KIND_NONSTRICT) { fill = th.regionBg; stroke = r >= 0 ? regionColor(r) : th.region; lw = 2.2; dash = [6, 3]; }
    ctx.fillStyle = fill;
    if (tiny) {
      ctx.fillRect(b.x, b.y, b.w, b.h);
      if (s.hits && s.hits.has(i)) { ctx.strokeStyle = th.hit; ctx.lineWidth = 6 * px; ctx.strokeRect(b.x, b.y, b.w, b.h); }
      return;
    }
    const radius = kind === KIND_INPUT || kind === KIND_OUTPUT ? b.h / 2 : 5;
    roundRect(ctx, b.x, b.y, b.w, b.h, radius);
    ctx.fill();
    if (s.linked && s.linked.has(i)) {
      ctx.save();
      ctx.strokeStyle = th.select;
      ctx.setLineDash([5, 3]);
      ctx.lineWidth = Math.max(2, 2.5 * px);
      roundRect(ctx, b.x - 4 * px, b.y - 4 * px, b.w + 8 * px, b.h + 8 * px, radius + 2);
      ctx.stroke();
      ctx.restore();
      roundRect(ctx, b.x, b.y, b.w, b.h, radius);
    }
    if (s.hits && s.hits.has(i)) {
      ctx.save();
      ctx.strokeStyle = th.hit;
      ctx.lineWidth = Math.max(4, 5 * px);
      ctx.stroke();
      ctx.restore();
    }
    ctx.strokeStyle = stroke;
    ctx.lineWidth = lw * Math.max(1, px * 0.8);
    if (dash) ctx.setLineDash(dash);
    ctx.stroke();
    if (dash) ctx.setLineDash([]);
    if (s.onlyHere && s.onlyHere.has(i)) drawOnlyHere(ctx, b, px);
    if (!detail) return;
    ctx.fillStyle = text;
    ctx.textBaseline = "middle";
    const t = gm.nodes[i].tensors;
    const meta = t && t.length ? tensorText(t[0]) + (t.length > 1 ? ` +${t.length - 1}` : "") : "";
    const label = gm.labels[i];
    if (meta && b.h >= 30) {
      setFont(ctx, `600 11px ${th.font}`);
      ctx.fillText(fitText(label, b.w - 14), b.x + 8, b.y + 12);
      setFont(ctx, `10px ${th.mono}`);
      ctx.fillStyle = kind === KIND_OUTPUT ? text : th.muted;
      ctx.fillText(fitText(meta, b.w - 14, true), b.x + 8, b.y + 25);
    } else {
      setFont(ctx, `600 11px ${th.font}`);
      ctx.fillText(fitText(label, b.w - 14), b.x + 8, b.y + b.h / 2);
    }
  }

  _group(ctx, s, gid, b, detail, px) {
    const th = this.theme;
    const g = s.tree.groups[gid];
    const isRegion = g.kind === "region";
    const rc = g.regionCount;
    ctx.fillStyle = isRegion ? withAlpha(regionColor(g.region), 0.22) : th.collapsed;
    roundRect(ctx, b.x, b.y, b.w, b.h, 7);
    ctx.fill();
    ctx.strokeStyle = isRegion ? regionColor(g.region) : th.groupBorder;
    ctx.lineWidth = 1.2 * Math.max(1, px);
    ctx.stroke();
    // a second outline suggests "more inside"; a folded series of blocks shows a stack of them
    ctx.beginPath();
    for (let k = 1; k <= (g.kind === "series" ? 3 : 1); k++) {
      ctx.moveTo(b.x + 3 + 3 * k, b.y + b.h + 3 * k);
      ctx.lineTo(b.x + b.w - 3 - 3 * k, b.y + b.h + 3 * k);
    }
    ctx.stroke();
    if (s.colorMode === "baseline") {
      const major = baselineMajority(s.tree, s.gm)[gid];
      if (major >= 0) {
        ctx.fillStyle = graphColor(major);
        roundRect(ctx, b.x, b.y, 6, b.h, 2);
        ctx.fill();
      }
    } else if (rc > 0 && !isRegion) {
      ctx.fillStyle = th.region;
      roundRect(ctx, b.x, b.y, 5, b.h, 2);
      ctx.fill();
    }
    if (s.hitGroups && s.hitGroups.has(gid)) {
      ctx.strokeStyle = th.hit; ctx.lineWidth = Math.max(4, 5 * px);
      roundRect(ctx, b.x, b.y, b.w, b.h, 7); ctx.stroke();
    }
    if (!detail) return;
    ctx.textBaseline = "middle";
    ctx.fillStyle = th.fg;
    setFont(ctx, `600 12px ${th.font}`);
    ctx.fillText(fitText(groupLabel(s.tree, gid), b.w - 40), b.x + 12, b.y + 16);
    setFont(ctx, `10.5px ${th.font}`);
    ctx.fillStyle = th.muted;
    ctx.fillText(fitText(groupSubtitle(s.tree, gid), b.w - 40), b.x + 12, b.y + 34);
    setFont(ctx, `600 14px ${th.font}`);
    ctx.fillStyle = th.muted;
    ctx.fillText("+", b.x + b.w - 20, b.y + b.h / 2);
  }
}

/** Side by side: an op with no counterpart in the other pane gets a bar and a corner badge. */
const ONLY = "#c026d3";
function drawOnlyHere(ctx, b, px) {
  ctx.save();
  ctx.fillStyle = ONLY;
  roundRect(ctx, b.x + b.w - 5, b.y + 3, 3, b.h - 6, 1.5);
  ctx.fill();
  ctx.beginPath();
  ctx.arc(b.x + b.w, b.y, Math.max(4.5, 3 * px), 0, 2 * Math.PI);
  ctx.fill();
  ctx.restore();
}

/** A graph break between two stacked fragments: a band across the view, naming the break. */
function drawBand(ctx, th, band, b, detail, px) {
  ctx.save();
  const known = band.breakIndex >= 0;
  ctx.fillStyle = withAlpha(known ? "#dc2626" : th.muted.startsWith("#") ? th.muted : "#64748b", th.dark ? 0.22 : 0.1);
  ctx.fillRect(b.x, b.y, b.w, b.h);
  ctx.strokeStyle = known ? "#dc2626" : th.muted;
  ctx.lineWidth = 1.5 * Math.max(1, px);
  ctx.setLineDash([8, 5]);
  ctx.beginPath();
  ctx.moveTo(b.x, b.y); ctx.lineTo(b.x + b.w, b.y);
  ctx.moveTo(b.x, b.y + b.h); ctx.lineTo(b.x + b.w, b.y + b.h);
  ctx.stroke();
  ctx.restore();
  if (!detail) return;
  ctx.textBaseline = "middle";
  setFont(ctx, `600 11px ${th.font}`);
  ctx.fillStyle = known ? (th.dark ? "#fca5a5" : "#b91c1c") : th.muted;
  const [what, where] = band.lines || [band.text, ""];
  ctx.fillText(fitText(`✂ ${what}`, b.w - 20), b.x + 10, b.y + 11);
  setFont(ctx, `10px ${th.mono}`);
  ctx.fillText(fitText(where, b.w - 20), b.x + 10, b.y + 24);
}

function tracePath(ctx, p, straight) {
  const m = p.length;
  ctx.moveTo(p[0], p[1]);
  if (straight || m === 4) {
    if (straight) { ctx.lineTo(p[m - 2], p[m - 1]); return; }
    const dy = Math.max(12, (p[3] - p[1]) / 2);
    ctx.bezierCurveTo(p[0], p[1] + dy, p[2], p[3] - dy, p[2], p[3]);
    return;
  }
  // through the bend points, with smooth joins
  let px = p[0], py = p[1];
  for (let j = 2; j < m - 2; j += 2) {
    const x = p[j], y = p[j + 1];
    const my = (py + y) / 2;
    ctx.bezierCurveTo(px, my, x, my, x, y);
    px = x; py = y;
  }
  const x = p[m - 2], y = p[m - 1];
  const my = (py + y) / 2;
  ctx.bezierCurveTo(px, my, x, my, x, y);
}

function arrow(ctx, x, y, s) {
  ctx.moveTo(x, y);
  ctx.lineTo(x - s * 0.75, y - s * 1.4);
  ctx.lineTo(x + s * 0.75, y - s * 1.4);
  ctx.closePath();
}

export function roundRect(ctx, x, y, w, h, r) {
  r = Math.min(r, w / 2, h / 2);
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}

/**
 * Truncate text to about `width` px at ~6.6 px per character: in the middle (contract/names.js:
 * names differ at their end), or at the end (`atEnd`: a shape reads left to right).
 */
// Canvas parses a font string on every assignment (and the drawing sets one per node and
// line): assigned only when it changes within a frame (no font is set between save/restore).
let fontNow = "";
function setFont(ctx, font) {
  if (font !== fontNow) { ctx.font = font; fontNow = font; }
}

export function fitText(text, width, atEnd = false) {
  const max = Math.max(1, Math.floor(width / 6.6));
  if (!atEnd) return cutMiddle(text, max);
  return text.length <= max ? text : text.slice(0, Math.max(1, max - 1)) + "…";
}

const alphaCache = new Map();
export function withAlpha(hex, a) {
  const key = hex + a;
  let v = alphaCache.get(key);
  if (v) return v;
  const m = /^#([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) return hex;
  const n = parseInt(m[1], 16);
  v = `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${a})`;
  alphaCache.set(key, v);
  return v;
}
