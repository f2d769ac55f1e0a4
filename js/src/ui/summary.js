// ui/summary.js — the headline and per-run numbers, the output check and the notes.
// Owns: drawing report.headline (its chips, as they are), report.counts (one table, a column
//   per run), and report.notes; the output check is ui/outputcheck.js.
// Must not: keep state or listen to anything (it renders once per Report); derive a headline,
//   a verdict or counts of its own (Python computes them once: nstviz/analysis/headline.py,
//   nstviz/analysis/counts.py).

import { compileIdText } from "../contract/compileid.js";
import { h } from "./dom.js";
import { errorHead } from "./output.js";
import { renderOutputCheck } from "./outputcheck.js";
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
      ? h("button", { class: `nsv-hl nsv-hl-${c.tone}`, type: "button", "data-kind": c.kind, "data-run": c.run, "data-compile": compileIdText(c.compile_id), title: c.help || null, onclick: () => onCompile(c.run, c.compile_id) }, c.text)
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

/** Rows of the per-run counts table: [label, value of a run's counts and Run]. */
const COUNT_ROWS = [
  ["graphs", (c) => c.graphs], ["distinct breaks", (c) => c.breaks], ["graph breaks (Dynamo's counter)", (c) => c.graph_breaks],
  ["breaks reached", (c) => c.break_hits], ["ops", (c) => c.ops], ["ATen ops", (c) => c.aten_ops], ["non-strict regions", (c) => c.regions],
  ["inlined nodes", (c) => c.inlined_nodes], ["one full graph", (c) => (c.full_graph == null ? null : c.full_graph ? "yes" : "no")],
  ["wall time", (c, run) => (run.wall_time_s ? `${fmtNum(run.wall_time_s)} s` : null)],
];

/** The runs' counts side by side: one row per count, one column per run (compact, numbers never wrap). */
function countsTable(report, names) {
  const counts = names.map((n) => (report.counts && report.counts[n]) || {});
  const rows = COUNT_ROWS.map(([label, get]) => [label, names.map((n, k) => get(counts[k], report.runs[n] || {}))])
    .filter(([, vals]) => vals.some((v) => v != null));
  const runClass = (n) => `nsv-run-${n === "baseline" ? "baseline" : n === "nonstrict" ? "nonstrict" : "attempt"}${isAttempt(n) ? " nsv-attempt-col" : ""}`;
  return h("div", { class: "nsv-scroll-x" }, h("table", { class: "nsv-table nsv-counts" },
    h("thead", null, h("tr", null, h("th", null, ""), names.map((n) => h("th", { class: `nsv-num ${runClass(n)}` }, n)))),
    h("tbody", null, rows.map(([label, vals]) => h("tr", null, h("th", { scope: "row" }, label),
      vals.map((v, k) => h("td", { class: `nsv-num${isAttempt(names[k]) ? " nsv-attempt-col" : ""}` }, v == null ? "—" : String(v))))))));
}

/** An advisor attempt's run ("attempt-3"): its column starts hidden (the Advisor tab has its story). */
const isAttempt = (n) => /^attempt-/.test(n);

export function renderSummary(report, index) {
  const names = index.runNames;
  const extras = [];
  for (const name of names) {
    const run = report.runs[name];
    const col = isAttempt(name) ? " nsv-attempt-col" : "";
    if (run.error) extras.push(h("div", { class: `nsv-error-line${col}`, "data-run": name }, `${name} raised ${errorHead(run)}`));
    for (const line of markLines(run)) extras.push(h("div", { class: `nsv-muted nsv-small${col}`, "data-run": name }, `${name} · ${line}`));
  }
  const attempts = names.filter(isAttempt).length;
  const wrap = h("div", { class: "nsv-counts-wrap", "data-attempts": attempts ? "hidden" : null }, countsTable(report, names), extras);
  if (attempts) {
    const label = (shown) => `${shown ? "hide" : "show"} the advisor's ${attempts} attempt${attempts === 1 ? "" : "s"}`;
    const btn = h("button", { class: "nsv-linkish nsv-small nsv-attempts-toggle", type: "button", "aria-expanded": "false", onclick: () => {
      const shown = wrap.dataset.attempts === "hidden";
      wrap.dataset.attempts = shown ? "shown" : "hidden";
      btn.setAttribute("aria-expanded", String(shown));
      btn.textContent = label(shown);
    } }, label(false));
    wrap.appendChild(btn);
  }
  return h("div", { class: "nsv-summary" },
    wrap,
    renderTiming(report, names),
    renderOutputCheck(report.outputs, outputsChip(report), fmtNum),
    (report.notes || []).length ? h("ul", { class: "nsv-notes" }, report.notes.map((t) => h("li", null, t))) : null,
  );
}
