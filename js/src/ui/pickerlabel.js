// ui/pickerlabel.js — the text of a graph picker's option: what tells two graphs apart first.
// Owns: the option label (function name, then graph id and size), so a select too narrow for
//   the whole text still shows whose graph it is; the full text is the select's tooltip.
// Must not: touch the DOM or pick graphs.

/** "forward · 10/0:aten_inference · 78 nodes" (no function: "10/0:aten_inference · 78 nodes"). */
export function graphOptionLabel(g) {
  const n = (g.nodes || []).length;
  return `${g.function ? g.function + " · " : ""}${g.id} · ${n} node${n === 1 ? "" : "s"}`;
}
