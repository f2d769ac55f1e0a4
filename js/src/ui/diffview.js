// ui/diffview.js — Side by side as a two-pane diff (Model Explorer's compare): the baseline's
//   fragments stacked against the nonstrict graph, panes fitted on entry, pan/zoom linked
//   (toggle remembered in the store as `linkPanes`), ops on one side only marked, and the
//   break bands of a stacked pane (click one: that break is selected).
// Owns: the stacked graphs' wiring into the index (derived graph ids), the link toggle, the
//   one-side-only sets, the camera following, the band texts, the diff legend row.
// Must not: lay out or draw (contract/stack.js builds the stacked graph, render/ draws), or
//   change the panes' graphs itself (it asks the app).

import { canStack, fragmentsOf, isStackId, STACK_PREFIX, stackGraph, stackId } from "../contract/stack.js";
import { KIND_CALL, KIND_NONSTRICT } from "../contract/graphmodel.js";
import { h } from "./dom.js";
import { where } from "./format.js";

/** Colour of the one-side-only mark (both themes). */
export const ONLY_COLOR = "#c026d3";

/** Let the index derive `stack:<level>` graphs of a run (on first use). */
export function attachStacks(index) {
  index.derive = (run, id) => stackGraph(index, run, id, (bi, a, b) => bandLines(index, run, bi, b));
}

/**
 * A band's words: [what, where] (drawn as two lines; joined for its tooltip). Without a break:
 * the next graph's compile says why it exists (a recompile and its reason), else "next frame".
 */
export function bandLines(index, run, bi, next) {
  const b = bi >= 0 ? ((index.run(run) || {}).breaks || [])[bi] : null;
  if (!b) {
    const c = next && ((index.run(run) || {}).compiles || []).find((x) => x.frame_id === next.frame_id && x.compile_id === next.compile_id);
    if (c && c.recompile_reason) return [`recompile of ${c.function || "the frame"} (no graph break)`, String(c.recompile_reason).split("\n")[0]];
    return ["next frame", "no recorded graph break names these two graphs"];
  }
  const loc = b.location || {};
  const reason = String(b.reason || "graph break").split("\n")[0];
  return [`graph break${b.gb_id ? " " + b.gb_id : ""} · ${reason}`, `${where(loc.file, loc.line)}${loc.function ? " in " + loc.function : ""}`];
}


/** The graph a side-by-side pane of `run` shows for `graph`: the stack when the run has several there. */
export function sideGraph(index, run, graph) {
  const g = index.graph(run, graph);
  return run === "baseline" && g && !isStackId(graph) && canStack(index, run, g.level) ? stackId(g.level) : graph;
}

/** A real graph standing for `graph` (the first fragment of a stack), for counterparts. */
export function realGraph(index, run, graph) {
  if (!isStackId(graph)) return graph;
  const f = fragmentsOf(index, run, graph.slice(STACK_PREFIX.length));
  return f.length ? f[0].id : graph;
}

export const linked = (app) => app.store.get("linkPanes") !== false;

/** The toolbar's link toggle (shown in Side by side only). */
export function linkToggle(app) {
  const b = h("button", { class: "nsv-btn nsv-btn-icon nsv-link-toggle", type: "button", "data-testid": "link-panes", hidden: true,
    title: "pan and zoom the two panes together (click to unlink)",
    onclick: () => { app.store.set({ linkPanes: !linked(app) }); syncToggle(app); } }, "⇆");
  app.linkBtn = b;
  syncToggle(app);
  return b;
}

function syncToggle(app) {
  const b = app.linkBtn;
  if (!b) return;
  const on = linked(app);
  b.setAttribute("aria-pressed", on ? "true" : "false");
  b.setAttribute("aria-label", on ? "panes linked" : "panes unlinked"); // one icon: the pressed state says which
  b.title = on ? "pan and zoom the two panes together (click to unlink)" : "each pane pans and zooms alone (click to link)";
  b.hidden = app.mode !== "side_by_side" || app.panes.length < 2;
}

/** After the panes of a mode are shown: fit both, mark one-side-only ops (Side by side only). */
export function afterShow(app) {
  syncToggle(app);
  const diff = app.mode === "side_by_side" && app.panes.length === 2 && app.panes.every((p) => p.entry && p.view);
  for (const p of app.panes) p.onlyHere = null;
  if (!diff) { app.panes.forEach((p) => { if (p.entry && p.view) p.pushScene(); }); return; }
  const [a, b] = app.panes;
  const keys = (p) => (gm, j) => nodeKeys(app, p.run, gm, j);
  a.onlyHere = oneSided(a.entry.gm, b.entry.gm, keys(a), keys(b));
  b.onlyHere = oneSided(b.entry.gm, a.entry.gm, keys(b), keys(a));
  for (const p of app.panes) p.pushScene();
  app.renderLegend(); // its diff row changes the panes' height: fit after it
  for (const p of app.panes) p.gc.resize(); // the grid just changed
  fitPanes(app.panes.map((p) => p.gc));
}

/** The toolbar's fit in Side by side: both panes as on entry. */
export function fitDiff(app) {
  const gcs = app.panes.filter((p) => p.view && p.gc.scene).map((p) => p.gc);
  if (gcs.length) fitPanes(gcs);
}

/** Below this scale the canvas draws no labels (render/canvas.js `detail`). */
const READABLE = 0.42;
const M = 24;

/**
 * Fit both panes on entry: all of each graph when that stays readable; else one scale for both
 * (the widest graph fits its pane's width: no label is cut at a side edge), tops aligned, the
 * rest below reached by panning (the panes move together).
 */
export function fitPanes(gcs) {
  const dims = gcs.map((gc) => ({ gc, w: Math.max(gc.scene.view.width, 1), h: Math.max(gc.scene.view.height, 1) }));
  const all = dims.map((d) => Math.min((d.gc.W - 2 * M) / d.w, (d.gc.H - 2 * M) / d.h, 1.5));
  if (all.every((k) => k >= READABLE + 0.08)) { gcs.forEach((gc) => gc.fit()); return; }
  const k = Math.min(1.2, ...dims.map((d) => (d.gc.W - 2 * M) / d.w));
  for (const d of dims) {
    const fitsAll = d.h * k <= d.gc.H - 2 * M;
    d.gc.setCamera(k, (d.gc.W - d.w * k) / 2, fitsAll ? (d.gc.H - d.h * k) / 2 : M);
  }
}

/** A node's place in the user's code: its innermost user frame "file:line" (resume functions keep the line). */
export function sourceKey(index, gm, j) {
  const s = gm.nodes[j].stack;
  if (s == null) return null;
  const f = index.frame(s);
  return f ? `${f.file}:${f.line}` : `#${s}`;
}

const isOp = (gm, i) => (gm.kind[i] === KIND_CALL || gm.kind[i] === KIND_NONSTRICT) && !gm.nodes[i].band;

/**
 * Ops of `gm` with no op of the same target from the same source line in `other` (the rule of
 * correspondingNodes; `keysOf(gm, j)` lists a node's "file:line" places). Ops without a user
 * stack are not judged.
 */
export function oneSided(gm, other, keysOf, otherKeysOf) {
  const have = new Set();
  for (let j = 0; j < other.n; j++) {
    if (!isOp(other, j)) continue;
    for (const k of otherKeysOf(other, j)) have.add(`${k}\u0000${other.nodes[j].target}`);
  }
  const out = new Set();
  for (let i = 0; i < gm.n; i++) {
    if (!isOp(gm, i)) continue;
    const ks = keysOf(gm, i);
    if (ks.length && !ks.some((k) => have.has(`${k}\u0000${gm.nodes[i].target}`))) out.add(i);
  }
  return out;
}

/**
 * Where node j comes from in the user's code: its source line, and for a node inlined from a
 * non-strict function (its stack ends at the call site) every line of that function's body,
 * where the same op sits in the baseline as written.
 */
export function nodeKeys(app, run, gm, j) {
  const k = sourceKey(app.index, gm, j);
  if (k == null) return [];
  const r = gm.region[j];
  if (r < 0) return [k];
  const reg = app.regionInfo(run, gm.regionIds[r]);
  const a = reg.line_start, b = reg.line_end;
  if (!reg.file || !Number.isInteger(a) || !Number.isInteger(b) || b < a || b - a > 400) return [k];
  const out = [k];
  for (let l = a; l <= b; l++) out.push(`${reg.file}:${l}`);
  return out;
}

/** A user moved pane `p`'s camera from `before`: move the other pane by the same change. */
export function follow(app, p, before) {
  if (app.mode !== "side_by_side" || !linked(app) || !before || !before.k) return;
  const cur = p.gc.cam;
  const f = cur.k / before.k;
  const dx = cur.tx - f * before.tx, dy = cur.ty - f * before.ty;
  for (const o of app.panes) {
    if (o === p || !o.view) continue;
    const c = o.gc.cam;
    o.gc.setCamera(c.k * f, f * c.tx + dx, f * c.ty + dy);
  }
}

/**
 * Linked panes, a node i selected in pane `from`: bring the first of its counterparts `list` in
 * pane `to` to the same height on screen, at the same scale (horizontally centred if it would be out).
 */
export function alignOn(app, from, i, to, list) {
  if (app.mode !== "side_by_side" || !linked(app) || !from || !list.length || !from.view || !to.view) return;
  const box = (p, j) => { const bi = p.view.boxOf.get(p.view.itemOf[j]); return bi === undefined ? null : p.view.boxes[bi]; };
  const fb = box(from, i), tb = box(to, list[0]);
  if (!fb || !tb) return;
  const [fx, fy] = from.gc.worldToScreen(fb.x + fb.w / 2, fb.y + fb.h / 2);
  const k = from.gc.cam.k;
  let x = fx;
  if (x - (tb.w * k) / 2 < M || x + (tb.w * k) / 2 > to.gc.W - M) x = to.gc.W / 2;
  to.gc.setCamera(k, x - (tb.x + tb.w / 2) * k, fy - (tb.y + tb.h / 2) * k);
}

/** A click on a band selects its break; true when node i of the graph is a band. */
export function selectBand(app, run, graphId, i) {
  const entry = app.cache.get(`${run}\u0000${graphId}`);
  const band = entry && entry.gm.nodes[i] && entry.gm.nodes[i].band;
  if (!band) return false;
  if (band.breakIndex >= 0) app.store.set({ selectedBreak: { run, index: band.breakIndex }, tab: "breaks" });
  else app.showToast("No recorded graph break names these two graphs");
  return true;
}

/** A selected break shown as a band in a stacked pane: mark the band there; true if so. */
export function showBreakInStack(app, sb) {
  let shown = false;
  for (const p of app.panes) {
    const gm = p.entry && p.entry.gm;
    if (!gm || !gm.graph.stacked || p.run !== sb.run) continue;
    const i = gm.nodes.findIndex((nd) => nd.band && nd.band.breakIndex === sb.index);
    if (i < 0) continue;
    shown = true;
    if (p.selected !== i) p.highlightNode(i, true);
  }
  return shown;
}

/** Tooltip lines of a band: [text, class]. */
export function bandTip(band) {
  return [[band.lines[0], "nsv-tip-title"], [band.lines[1], "nsv-mono"],
    [band.breakIndex >= 0 ? "click: select this break (Breaks tab)" : "Dynamo compiled the next graph in another frame", "nsv-muted"]];
}

/** Debug view of a stacked pane: fragments and bands with their world y. */
export function stackDebug(p) {
  const gm = p.entry && p.entry.gm;
  const st = gm && gm.graph.stacked;
  if (!st || !p.view) return null;
  const tree = p.entry.tree;
  const yOf = (item) => { const bi = p.view.boxOf.get(item); return bi === undefined ? null : p.view.boxes[bi].y; };
  return {
    level: st.level,
    fragments: st.fragments.map((f, k) => ({ graph: f.graph, function: f.function, y: yOf(gm.n + tree.stackGroups[k]) })),
    bands: gm.nodes.map((nd, i) => [nd, i]).filter(([nd]) => nd.band).map(([nd, i]) => ({
      name: nd.name, break_index: nd.band.breakIndex, text: nd.band.text, y: yOf(p.view.itemOf[i]) })),
  };
}

/** The legend row of the diff: what the one-side-only mark and a band mean. */
export function renderDiffLegend(app) {
  if (app.mode !== "side_by_side" || !app.panes.some((p) => p.onlyHere && p.onlyHere.size)) return;
  const sw = h("span", { class: "nsv-sw nsv-sw-only" });
  sw.style.borderColor = ONLY_COLOR;
  const stacked = app.panes.some((p) => p.entry && p.entry.gm.graph.stacked);
  app.legend.appendChild(h("div", { class: "nsv-legend-row", "data-testid": "diff-legend" },
    h("span", { class: "nsv-lg" }, sw, "op on this side only (no op of the same target from the same source line in the other pane)"),
    stacked ? h("span", { class: "nsv-lg" }, h("span", { class: "nsv-sw nsv-sw-band" }), "graph break between two baseline graphs (click: the break)") : null));
}
