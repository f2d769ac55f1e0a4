// ui/breakmarks.js — the selected graph break, marked on the graphs shown: each pane on one side
//   of it says so in its bar ("ends at the break" / "resumes after it") and the ops from the
//   breaking line are outlined, in whatever graphs are shown (baseline or nonstrict).
// Owns: the pane badges and the outlines it sets; the facts come from contract/breakmarks.js.
// Must not: change the selection, the panes' graphs, or outlines it did not set.

import { breakOps, breakSide } from "../contract/breakmarks.js";
import { h } from "./dom.js";
import { where } from "./format.js";

/** The selected break of the store, or null. */
export function selectedBreakOf(app) {
  const sb = app.store.get("selectedBreak") || {};
  if (sb.run == null) return null;
  return ((app.index.run(sb.run) || {}).breaks || [])[sb.index] || null;
}

/** Mark (or unmark) the selected break on every pane shown. Cheap: one pass over each graph. */
export function markBreak(app) {
  const sb = app.store.get("selectedBreak") || {};
  const brk = selectedBreakOf(app);
  // every badge made before goes, also those of panes a mode switch has dropped
  for (const b of app.el.querySelectorAll(".nsv-break-side")) b.remove();
  for (const p of app.panes) {
    p.breakBadge = null;
    if (p.breakMarked) { p.breakMarked = false; p.setLinked([]); }
    if (!brk || !p.entry) continue;
    const side = p.run === sb.run ? breakSide(brk, p.graphId) : null;
    const ops = breakOps(p.entry.gm, (s) => app.index.stack(s), brk);
    if (!side && !ops.nodes.length) continue;
    const loc = brk.location || {};
    const opsText = ops.nodes.length
      ? `${ops.nodes.length} op${ops.nodes.length === 1 ? "" : "s"} from ${where(ops.frame.file, ops.frame.line)} outlined`
      : "no op of this graph comes from the breaking line";
    const text = side === "before" ? "ends at the break" : side === "after" ? "resumes after the break" : "ops at the break";
    p.breakBadge = h("span", {
      class: "nsv-break-side", "data-side": side || "ops", "data-ops": String(ops.nodes.length),
      title: `${side === "before" ? "This graph ends at" : side === "after" ? "This graph starts after" : "Ops here come from"} the graph break at ${where(loc.file, loc.line)}; ${opsText}`,
    }, text);
    // over the graph's top-left corner: the picker bar has no room to spare in a narrow pane
    const body = p.el.querySelector(".nsv-pane-body");
    if (body) body.appendChild(p.breakBadge);
    if (ops.nodes.length) { p.setLinked(ops.nodes); p.breakMarked = true; }
  }
}
