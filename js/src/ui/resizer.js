// ui/resizer.js — the drag handle between the side panel and the graph: the side panel's width.
// Owns: the handle (a focusable separator: drag it, or ArrowLeft/ArrowRight, Shift for bigger
//   steps, Home/End, double-click to reset), the width's bounds, and keeping the width in the
//   UI store (key "sideWidth": UI-only, never synced to the kernel), so a rebuild keeps it.
// Must not: lay out anything else; set the grid's columns inline (the width is a CSS variable,
//   read only where the side panel sits beside the graph, so narrow containers still stack).

import { h } from "./dom.js";

export const MIN_SIDE = 220;
export const MIN_MAIN = 280;
const STEP = 24;

/** The width kept within [MIN_SIDE, body width - MIN_MAIN]. */
export function clampSide(w, bodyWidth) {
  return Math.round(Math.max(MIN_SIDE, Math.min(w, Math.max(MIN_SIDE, bodyWidth - MIN_MAIN))));
}

/**
 * Give `body` (the side + main grid) a handle on `side`'s right edge; returns `body`.
 * @param {HTMLElement} body
 * @param {HTMLElement} side
 * @param {{get(k:string):any, set(p:object, origin?:string):any}} store
 */
export function sideResizable(body, side, store) {
  const handle = h("div", { class: "nsv-side-resizer", role: "separator", tabindex: "0", "aria-orientation": "vertical",
    "aria-label": "side panel width (drag, or ← / →)", title: "drag to resize the side panel; double-click to reset" });
  const apply = (w) => {
    if (w == null) { body.style.removeProperty("--nsv-side-w"); delete body.dataset.sideW; handle.removeAttribute("aria-valuenow"); return; }
    body.style.setProperty("--nsv-side-w", `${w}px`);
    body.dataset.sideW = String(w);
    handle.setAttribute("aria-valuenow", String(w));
    handle.setAttribute("aria-valuemin", String(MIN_SIDE));
  };
  const set = (w) => {
    const v = clampSide(w, body.getBoundingClientRect().width);
    store.set({ sideWidth: v });
    apply(v);
  };
  const current = () => side.getBoundingClientRect().width;
  let drag = null;
  handle.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, w: current() };
    handle.setPointerCapture(ev.pointerId);
    handle.classList.add("nsv-dragging");
    ev.preventDefault();
  });
  handle.addEventListener("pointermove", (ev) => { if (drag) set(drag.w + ev.clientX - drag.x); });
  const end = (ev) => {
    if (!drag) return;
    drag = null;
    handle.classList.remove("nsv-dragging");
    if (handle.hasPointerCapture(ev.pointerId)) handle.releasePointerCapture(ev.pointerId);
  };
  handle.addEventListener("pointerup", end);
  handle.addEventListener("pointercancel", end);
  handle.addEventListener("dblclick", () => { store.set({ sideWidth: null }); apply(null); });
  handle.addEventListener("keydown", (ev) => {
    const step = ev.shiftKey ? STEP * 4 : STEP;
    const to = { ArrowLeft: current() - step, ArrowRight: current() + step, Home: MIN_SIDE, End: Infinity }[ev.key];
    if (to === undefined) return;
    set(to);
    ev.preventDefault();
    ev.stopPropagation();
  });
  side.appendChild(handle);
  const kept = store.get("sideWidth");
  if (kept != null) apply(kept);
  return body;
}
