// ui/summary.js — the headline and per-run numbers, the output check and the notes.
// Owns: reading report.counts / report.outputs / report.runs into text.
// Must not: keep state or listen to anything; it renders once per Report.

import { h } from "./dom.js";
import { errorHead } from "./output.js";

function fmtNum(x) {
  if (x == null || Number.isNaN(x)) return "—";
  if (typeof x === "string") return x;
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a < 1e-3 || a >= 1e5 ? x.toExponential(1) : String(+x.toPrecision(3));
}

/** Counts of a run: from report.counts, else derived from the run itself. */
export function runCounts(report, name) {
  const c = report.counts && report.counts[name];
  if (c) return c;
  const run = report.runs[name] || {};
  const graphs = run.graphs || [];
  const dyn = graphs.filter((g) => g.level === "dynamo");
  return {
    graphs: dyn.length || graphs.length, breaks: (run.breaks || []).length,
    break_hits: (run.breaks || []).reduce((s, b) => s + (b.count || 1), 0),
    ops: graphs.reduce((s, g) => s + (g.op_count || 0), 0), aten_ops: null,
    regions: (run.regions || []).length, inlined_nodes: null, full_graph: dyn.length === 1 && !(run.breaks || []).length,
  };
}

/** The comparison the headline `match` summarises: baseline vs nonstrict, else the first one. */
export function headlineComparison(o) {
  const cs = (o && o.comparisons) || [];
  return cs.find((c) => (c.left === "baseline" && c.right === "nonstrict") || (c.left === "nonstrict" && c.right === "baseline")) || cs[0] || null;
}

/** The run the headline compares against, when it is not the usual baseline-vs-nonstrict pair. */
function comparedAgainst(o) {
  const c = headlineComparison(o);
  if (!c) return "";
  const pair = [c.left, c.right];
  if (pair.includes("baseline") && pair.includes("nonstrict")) return "";
  const other = pair.find((n) => n !== "nonstrict" && n !== "baseline") || pair.find((n) => n !== "nonstrict");
  return other ? ` ${other}` : "";
}

export function outputsText(o) {
  if (!o || o.match == null) return o && o.skipped_reason ? `outputs not checked (${o.skipped_reason})` : "outputs not checked";
  const vs = comparedAgainst(o);
  if (o.match) return `outputs match${vs}${o.max_abs_diff ? ` (max |Δ| ${fmtNum(o.max_abs_diff)})` : ""}`;
  return `outputs DIFFER${vs ? " from" + vs : ""} (max |Δ| ${fmtNum(o.max_abs_diff)})`;
}

/** Why the baseline produced no usable compile: "fullgraph failed", "baseline raised", or null. */
export function baselineFailure(report) {
  const run = report.runs.baseline || {};
  if ((run.breaks || []).some((b) => b.fatal)) return "fullgraph failed";
  if (run.error || run.error_type) return "baseline raised";
  return null;
}

const plural = (n, w) => `${n} ${w}${n === 1 ? "" : "s"}`;

/**
 * "3 breaks → 0 · 4 graphs → 1 · outputs match" as a list of [text, tone] parts.
 * Red ("bad") only for real regressions: more breaks, outputs differ, the nonstrict run raised.
 */
export function headlineParts(report) {
  const parts = [];
  const b = runCounts(report, "baseline");
  const ns = report.runs.nonstrict;
  if (ns) {
    const n = runCounts(report, "nonstrict");
    parts.push([`${plural(b.breaks, "break")} → ${n.breaks}`, n.breaks < b.breaks ? "good" : n.breaks > b.breaks ? "bad" : "neutral"]);
    const failed = baselineFailure(report);
    if (ns.error || ns.error_type) {
      parts.push([`nonstrict raised ${ns.error_type || ns.error || ""}`.trim(), "bad"]);
    } else if (failed && b.graphs === 0 && n.graphs > 0) {
      parts.push([`${failed} → ${plural(n.graphs, "graph")}`, "good"]);
    } else {
      // fewer graphs is better; more graphs alone is not a regression worth red
      parts.push([`${plural(b.graphs, "graph")} → ${n.graphs}`, b.graphs === 0 && n.graphs > 0 ? "good" : n.graphs < b.graphs ? "good" : "neutral"]);
    }
  } else {
    parts.push([plural(b.breaks, "break"), "neutral"]);
    parts.push([plural(b.graphs, "graph"), "neutral"]);
  }
  const o = report.outputs;
  parts.push([outputsText(o), !o || o.match == null ? "neutral" : o.match ? "good" : "bad"]);
  return parts;
}

export function renderSummary(report, index) {
  const cards = [];
  for (const name of index.runNames) {
    const run = report.runs[name];
    const c = runCounts(report, name);
    const rows = [
      ["graphs", c.graphs], ["distinct breaks", c.breaks], ["break hits", c.break_hits], ["ops", c.ops],
      ["ATen ops", c.aten_ops], ["non-strict regions", c.regions], ["inlined nodes", c.inlined_nodes],
      ["one full graph", c.full_graph ? "yes" : "no"],
    ];
    if (run.wall_time_s) rows.push(["wall time", `${fmtNum(run.wall_time_s)} s`]);
    cards.push(h("div", { class: `nsv-card nsv-card-${name === "baseline" ? "baseline" : name === "nonstrict" ? "nonstrict" : "attempt"}` },
      h("div", { class: "nsv-card-title" }, name),
      h("dl", { class: "nsv-kv" }, rows.filter((r) => r[1] != null).map(([k, v]) => [h("dt", null, k), h("dd", null, String(v))])),
      run.error ? h("div", { class: "nsv-error-line" }, `raised ${errorHead(run)}`) : null,
      (run.marked || []).length ? h("div", { class: "nsv-muted nsv-small" }, "non-strict: " + run.marked.map((m) => m.qualname + (m.applied === false ? " (never applied)" : "")).join(", ")) : null,
    ));
  }
  const o = report.outputs || {};
  const details = (o.details || []).map((d) =>
    h("tr", null, h("td", { class: "nsv-mono" }, d.path), h("td", { class: d.match === false ? "nsv-bad" : d.match ? "nsv-good" : "" }, d.match == null ? "—" : d.match ? "match" : "differ"),
      h("td", null, fmtNum(d.max_abs_diff)), h("td", null, fmtNum(d.max_rel_diff)), h("td", { class: "nsv-mono" }, [d.shape, d.dtype].filter(Boolean).join(" ")), h("td", null, d.note || "")));
  return h("div", { class: "nsv-summary" },
    h("div", { class: "nsv-cards" }, cards),
    h("div", { class: "nsv-outputs" },
      h("div", { class: "nsv-section-title" }, "Output check"),
      h("div", { class: o.match === false ? "nsv-bad" : o.match ? "nsv-good" : "nsv-muted" }, outputsText(o) + (o.nondeterministic ? " · the baseline is non-deterministic" : "")),
      details.length ? h("table", { class: "nsv-table" }, h("thead", null, h("tr", null, ["value", "result", "max |Δ|", "max rel", "shape", "note"].map((t) => h("th", null, t)))), h("tbody", null, details)) : null),
    (report.notes || []).length ? h("ul", { class: "nsv-notes" }, report.notes.map((t) => h("li", null, t))) : null,
  );
}
