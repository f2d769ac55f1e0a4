// ui/outputcheck.js — the Overview's output check: the verdict line, then the compared values
//   in display order (values that differ first, then tensors, then everything else, the
//   Report's order kept within each), two filters ("differences only", "tensors only", when
//   there are more values than the first rows) and a compact table showing the first rows,
//   with a button for the rest.
// Owns: that display order, the filters' state (per render, not synced) and the table.
// Must not: decide a verdict or reorder the Report itself (report.outputs keeps the order the
//   capture gave, differing leaves first: nstviz/passes/output_verdict.py); put a Report string
//   in the page other than as text (h() text children only).

import { h } from "./dom.js";
import { breakable } from "./wrap.js";

/** Rows shown before "show all". */
export const FIRST_ROWS = 8;

/** A compared value is a tensor when the capture recorded a shape or dtype for it. */
export function isTensor(d) {
  return !!(d && (d.shape || d.dtype));
}

/** Display order: differing values, then tensors, then the rest; stable within each. */
export function outputOrder(details) {
  const key = (d) => (d.match === false ? 0 : 2) + (isTensor(d) ? 0 : 1);
  return details.map((d, i) => [key(d), i, d]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[2]);
}

/** The rows left by the filters. */
export function filterOutputs(details, { diffsOnly = false, tensorsOnly = false } = {}) {
  return details.filter((d) => (!diffsOnly || d.match === false) && (!tensorsOnly || isTensor(d)));
}

function row(d, fmtNum) {
  const result = d.match == null ? "—" : d.match ? "match" : "differ";
  return h("tr", { "data-match": String(d.match), "data-path": d.path },
    h("td", { class: "nsv-mono nsv-out-path" }, breakable(d.path),
      d.shape || d.dtype ? h("div", { class: "nsv-muted nsv-out-shape" }, [d.dtype, d.shape].filter(Boolean).join(" ")) : null,
      d.note ? h("div", { class: "nsv-muted nsv-small" }, d.note) : null),
    h("td", { class: `nsv-nowrap ${d.match === false ? "nsv-bad" : d.match ? "nsv-good" : ""}` }, result),
    h("td", { class: "nsv-num" }, h("div", null, fmtNum(d.max_abs_diff)),
      d.max_rel_diff != null && d.max_rel_diff !== 0 ? h("div", { class: "nsv-muted nsv-small" }, `rel ${fmtNum(d.max_rel_diff)}`) : null));
}

/**
 * The output check section.
 * @param {any} outputs report.outputs
 * @param {{text:string, tone:string}|null} verdict the headline's outputs chip
 * @param {(x:any)=>string} fmtNum number formatting shared with the Overview
 */
export function renderOutputCheck(outputs, verdict, fmtNum) {
  const o = outputs || {};
  const all = outputOrder(o.details || []);
  const state = { diffsOnly: false, tensorsOnly: false, showAll: false };
  const body = h("tbody");
  const more = h("button", { class: "nsv-linkish nsv-small nsv-out-more", type: "button", onclick: () => { state.showAll = true; draw(); } });
  const empty = h("div", { class: "nsv-muted nsv-small nsv-out-empty", hidden: true });
  const count = h("span", { class: "nsv-muted nsv-small" });
  const draw = () => {
    const rows = filterOutputs(all, state);
    const shown = state.showAll ? rows : rows.slice(0, FIRST_ROWS);
    body.replaceChildren(...shown.map((d) => row(d, fmtNum)));
    more.hidden = shown.length >= rows.length;
    more.textContent = `show all ${rows.length}`;
    count.textContent = `${rows.length} of ${all.length} values`;
    empty.hidden = rows.length > 0;
    empty.textContent = state.diffsOnly ? "no value differs" : "no tensor among the compared values";
    table.hidden = rows.length === 0;
  };
  const box = (key, label) => h("label", { class: "nsv-out-filter" },
    h("input", { type: "checkbox", onchange: (ev) => { state[key] = ev.target.checked; draw(); } }), ` ${label}`);
  const table = h("table", { class: "nsv-table nsv-out-table" },
    h("thead", null, h("tr", null, ["value (dtype, shape)", "result", "max |Δ|"].map((t) => h("th", null, t)))), body);
  const tone = verdict && verdict.tone === "bad" ? "nsv-bad" : verdict && verdict.tone === "good" ? "nsv-good" : "nsv-muted";
  const section = h("div", { class: "nsv-outputs" },
    h("div", { class: "nsv-section-title" }, "Output check"),
    h("div", { class: tone }, (verdict ? verdict.text : "") + (o.nondeterministic ? " · the baseline is non-deterministic" : "")),
    all.length > FIRST_ROWS ? h("div", { class: "nsv-out-filters" }, box("diffsOnly", "differences only"), box("tensorsOnly", "tensors only"), count) : null,
    all.length ? h("div", { class: "nsv-scroll-x" }, table) : null, empty, all.length ? more : null);
  if (all.length) draw();
  return section;
}
