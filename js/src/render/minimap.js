// render/minimap.js — the overview in a graph pane's corner: the whole laid-out view in
//   miniature with the visible area outlined; click or drag on it to move there. Hidden when
//   the user turns it off, and while the whole view is on screen (fitted: it would cover nodes).
// Owns: its small canvas, a cached bitmap of the scene (redrawn only when the scene
//   changes), and the viewport rectangle (redrawn with every camera change).
// Must not: lay out, select, or change anything but the camera of the GraphCanvas it serves.

import { withAlpha } from "./canvas.js";
import { regionColor } from "./theme.js";

const W = 168, H = 112;

export class Minimap {
  /** @param {import("./canvas.js").GraphCanvas} gc @param {HTMLElement} host */
  constructor(gc, host) {
    this.gc = gc;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "nsv-minimap";
    this.canvas.setAttribute("aria-hidden", "true");
    this.canvas.title = "overview: click or drag to move";
    host.appendChild(this.canvas);
    this.ctx = this.canvas.getContext("2d");
    this.bitmap = null;
    this.scene = null;
    const move = (ev) => {
      if (!this.map) return;
      const r = this.canvas.getBoundingClientRect();
      const wx = (ev.clientX - r.left - this.map.ox) / this.map.s, wy = (ev.clientY - r.top - this.map.oy) / this.map.s;
      const k = this.gc.cam.k;
      this.gc.setCamera(k, this.gc.W / 2 - wx * k, this.gc.H / 2 - wy * k);
    };
    let dragging = false;
    this.canvas.addEventListener("pointerdown", (ev) => { dragging = true; this.canvas.setPointerCapture(ev.pointerId); move(ev); ev.stopPropagation(); });
    this.canvas.addEventListener("pointermove", (ev) => { if (dragging) move(ev); });
    this.canvas.addEventListener("pointerup", () => { dragging = false; });
  }

  destroy() {
    this.canvas.remove();
  }

  /** Re-render the cached miniature of `scene`. */
  setScene(scene, theme) {
    this.scene = scene;
    const v = scene.view;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = W * dpr; this.canvas.height = H * dpr;
    this.canvas.style.width = W + "px"; this.canvas.style.height = H + "px";
    const s = Math.min((W - 8) / Math.max(v.width, 1), (H - 8) / Math.max(v.height, 1));
    this.map = { s, ox: (W - v.width * s) / 2, oy: (H - v.height * s) / 2 };
    this.hidden = v.width * s < 2 && v.height * s < 2;
    const bm = document.createElement("canvas");
    bm.width = W * dpr; bm.height = H * dpr;
    const c = bm.getContext("2d");
    c.setTransform(dpr * s, 0, 0, dpr * s, dpr * this.map.ox, dpr * this.map.oy);
    const n = v.n;
    for (const b of v.boxes) {
      if (b.item >= n && scene.expanded.has(b.item - n)) {
        const g = scene.tree.groups[b.item - n];
        if (g.kind === "region") { c.fillStyle = withAlpha(regionColor(g.region), 0.35); c.fillRect(b.x, b.y, b.w, b.h); }
        continue;
      }
      const region = b.item < n ? scene.gm.region[b.item] : (scene.tree.groups[b.item - n].regionCount > 0 ? 0 : -1);
      c.fillStyle = region >= 0 ? regionColor(region) : theme.nodeBorder;
      c.fillRect(b.x, b.y, Math.max(b.w, 1.5 / s), Math.max(b.h, 1.5 / s));
    }
    this.bitmap = bm;
    this.theme = theme;
  }

  /** Hide or show (the user's toggle; the app keeps the choice in its store). */
  setEnabled(on) {
    this.off = !on;
    this.draw();
    if (this.off) this.canvas.hidden = true;
  }

  /** The whole view is on screen (e.g. fitted): the overview adds nothing and would cover nodes. */
  wholeInView() {
    const v = this.scene.view, { k, tx, ty } = this.gc.cam;
    return tx >= -1 && ty >= -1 && tx + v.width * k <= this.gc.W + 1 && ty + v.height * k <= this.gc.H + 1;
  }

  /** Draw the miniature and the visible rectangle (called after every main draw). */
  draw() {
    if (!this.bitmap || !this.scene) return;
    this.canvas.hidden = this.off || this.hidden || !this.scene.showMinimap || this.gc.W < 420 || this.gc.H < 300 || this.wholeInView();
    if (this.canvas.hidden) return;
    const ctx = this.ctx, dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.globalAlpha = 0.92;
    ctx.fillStyle = this.theme.bg;
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.globalAlpha = 1;
    ctx.drawImage(this.bitmap, 0, 0);
    const { k, tx, ty } = this.gc.cam;
    const { s, ox, oy } = this.map;
    const x0 = (-tx / k) * s + ox, y0 = (-ty / k) * s + oy;
    const w = (this.gc.W / k) * s, h = (this.gc.H / k) * s;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.strokeStyle = this.theme.select;
    ctx.lineWidth = 1.5;
    ctx.fillStyle = withAlpha(this.theme.select.startsWith("#") ? this.theme.select : "#2563eb", 0.1);
    ctx.fillRect(x0, y0, w, h);
    ctx.strokeRect(x0, y0, w, h);
  }
}
