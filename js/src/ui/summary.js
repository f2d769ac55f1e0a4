// ui/summary.js — the headline and per-run numbers, the output check and the notes.
// Owns: drawing report.headline (its chips, as they are), report.counts, report.outputs'
//   details and report.notes.
// Must not: keep state or listen to anything (it renders once per Report); derive a headline,
//   a verdict or counts of its own (Python computes them once: nstviz/analysis/headline.py,
//   nstviz/analysis/counts.py).

import { h } from "./dom.js";
import { errorHead } from "./output.js";
import { renderTiming } from "./timing.js";

function fmtNum(x) {
  if (x == null || Number.isNaN(x)) return "—";
  if (typeof x === "string") return x;
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a < 1e-3 || a >= 1e5 ? x.toExponential(1) : String(+x.toPrecision(3));
}

/** The headline chips, as the Report gives them (computed once, in Python); a chip about one
 *  compile (a recompile_limit hit) is a button that calls `onCompile(run, id)`. */
export function renderHeadline(report, onCompile) {
  const chips = (report.headline && report.headline.chips) || [];
  return h("div", { class: "nsv-headline", "data-testid": "headline" },
    chips.map((c) => c.compile_id && c.run && onCompile
      ? h("button", { class: `nsv-hl nsv-hl-${c.tone}`, type: "button", "data-kind": c.kind, "data-run": c.run, "data-compile": c.compile_id, title: c.help || null, onclick: () => onCompile(c.run, c.compile_id) }, c.text)
      : h("span", { class: `nsv-hl nsv-hl-${c.tone}`, "data-kind": c.kind, title: c.help || null }, c.text)));
}

/** The output verdict chip of the headline, or null. */
function outputsChip(report) {
  return ((report.headline && report.headline.chips) || []).find((c) => c.kind === "outputs") || null;
}

/** A run's marks, one line per decorator: "non-strict: a, b" (nonstrict_trace) and "leaf_function: c". */
export function markLines(run) {
  const marks = run.marked || [];
  const names = (kind) => marks.filter((m) => (m.decorator || "nonstrict_trace") === kind)
    .map((m) => m.qualname + (m.applied === false ? " (never applied)" : ""));
  const lines = [];
  const nst = names("nonstrict_trace");
  const leaf = names("leaf_function");
  if (nst.length) lines.push("non-strict: " + nst.join(", "));
  if (leaf.length) lines.push("leaf_function: " + leaf.join(", "));
  return lines;
}

export function renderSummary(report, index) {
  const cards = [];
  for (const name of index.runNames) {
    const run = report.runs[name];
    const c = (report.counts && report.counts[name]) || {};
    const rows = [
      ["graphs", c.graphs], ["distinct breaks", c.breaks], ["graph breaks (Dynamo's counter)", c.graph_breaks], ["breaks reached", c.break_hits], ["ops", c.ops],
      ["ATen ops", c.aten_ops], ["non-strict regions", c.regions], ["inlined nodes", c.inlined_nodes],
      ["one full graph", c.full_graph ? "yes" : "no"],
    ];
    if (run.wall_time_s) rows.push(["wall time", `${fmtNum(run.wall_time_s)} s`]);
    cards.push(h("div", { class: `nsv-card nsv-card-${name === "baseline" ? "baseline" : name === "nonstrict" ? "nonstrict" : "attempt"}` },
      h("div", { class: "nsv-card-title" }, name),
      h("dl", { class: "nsv-kv" }, rows.filter((r) => r[1] != null).map(([k, v]) => [h("dt", null, k), h("dd", null, String(v))])),
      run.error ? h("div", { class: "nsv-error-line" }, `raised ${errorHead(run)}`) : null,
      ...markLines(run).map((line) => h("div", { class: "nsv-muted nsv-small" }, line)),
    ));
  }
  const o = report.outputs || {};
  const verdict = outputsChip(report);
  const details = (o.details || []).map((d) =>
    h("tr", null, h("td", { class: "nsv-mono" }, d.path), h("td", { class: d.match === false ? "nsv-bad" : d.match ? "nsv-good" : "" }, d.match == null ? "—" : d.match ? "match" : "differ"),
      h("td", null, fmtNum(d.max_abs_diff)), h("td", null, fmtNum(d.max_rel_diff)), h("td", { class: "nsv-mono" }, [d.shape, d.dtype].filter(Boolean).join(" ")), h("td", null, d.note || "")));
  return h("div", { class: "nsv-summary" },
    h("div", { class: "nsv-cards" }, cards),
    renderTiming(report, index.runNames),
    h("div", { class: "nsv-outputs" },
      h("div", { class: "nsv-section-title" }, "Output check"),
      h("div", { class: verdict && verdict.tone === "bad" ? "nsv-bad" : verdict && verdict.tone === "good" ? "nsv-good" : "nsv-muted" }, (verdict ? verdict.text : "") + (o.nondeterministic ? " · the baseline is non-deterministic" : "")),
      details.length ? h("table", { class: "nsv-table" }, h("thead", null, h("tr", null, ["value", "result", "max |Δ|", "max rel", "shape", "note"].map((t) => h("th", null, t)))), h("tbody", null, details)) : null),
    (report.notes || []).length ? h("ul", { class: "nsv-notes" }, report.notes.map((t) => h("li", null, t))) : null,
  );
}
