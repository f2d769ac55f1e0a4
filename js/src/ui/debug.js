// ui/debug.js — the read-only debug hook on the root element (el.__nstviz) for tests and
//   benchmarks: what each pane draws (nodes, groups, highlight, camera), the UI state,
//   screen points of drawn nodes, and timings.
// Must not: change anything (it reads the app; tests act through real clicks and keys).

import { LEVEL_NAMES } from "../contract/decode.js";

/** @param {import("./app.js").App} app */
export function makeDebugHook(app) {
  return Object.freeze({
    version: 1,
    ready: () => app.el.dataset.nstvizReady === "1",
    error: () => (app.el.dataset.nstvizError ? app.root.textContent : null),
    state: () => JSON.parse(JSON.stringify(app.store.state)),
    mode: () => app.mode,
    panes: () => app.panes.map((p) => p.debug()),
    /** Client (page) coordinates of a drawn node or group key in pane k, or null. */
    screenPoint(k, nameOrKey) {
      const p = app.panes[k];
      if (!p || !p.view) return null;
      const { gm, tree } = p.entry;
      let item = gm.byName.has(nameOrKey) ? p.view.itemOf[gm.byName.get(nameOrKey)] : -1;
      if (item < 0) { const g = tree.groups.find((x) => !x.dead && x.key === nameOrKey); if (g) item = gm.n + g.id; }
      const bi = p.view.boxOf.get(item);
      if (bi === undefined) return null;
      const b = p.view.boxes[bi];
      const r = p.gc.canvas.getBoundingClientRect();
      const [sx, sy] = p.gc.worldToScreen(b.x + b.w / 2, b.y + Math.min(b.h / 2, 12));
      return { x: r.left + sx, y: r.top + sy, inside: sx >= 0 && sy >= 0 && sx <= r.width && sy <= r.height };
    },
    canvasRect(k) {
      const p = app.panes[k];
      return p ? p.gc.canvas.getBoundingClientRect().toJSON() : null;
    },
    timings: () => ({ decodeMs: app.decodeMs, firstPaintMs: app.firstPaintMs, steps: { ...app.steps, ...app.host.steps }, lastSearchMs: app.lastSearchMs, panes: app.panes.map((p) => ({ ...p.stats })) }),
    levelNames: LEVEL_NAMES,
  });
}
