// ui/wheelhint.js — the short note over a graph pane when the wheel passed it by ("Ctrl+wheel
//   to zoom, or click to interact"): in a notebook a plain wheel scrolls the notebook.
// Owns: the note's element and its timing (shown for a moment; again only after a quiet spell).
// Must not: handle input itself (interaction/panzoom.js decides when the wheel passes).

import { h } from "./dom.js";

const SHOW_MS = 1800, AGAIN_MS = 20000;

/** @param {HTMLElement} host the pane body @returns {(ev?: WheelEvent) => void} show the note (at the pointer's height) */
export function wheelHint(host) {
  const el = h("div", { class: "nsv-wheel-hint", role: "status", hidden: true }, "Ctrl+wheel to zoom, or click to interact");
  host.appendChild(el);
  let last = -Infinity, timer = 0;
  return (ev) => {
    const now = performance.now();
    if (el.hidden && now - last < AGAIN_MS) return;
    if (el.hidden) last = now;
    if (ev) { const r = host.getBoundingClientRect(); el.style.top = `${Math.max(24, Math.min(r.height - 24, ev.clientY - r.top))}px`; }
    el.hidden = false;
    clearTimeout(timer);
    timer = setTimeout(() => { el.hidden = true; }, SHOW_MS);
  };
}
