// ui/advisor.js — the advisor's candidates and its recommendation (report.candidates and
//   report.recommendation), shown only when present.
// Owns: rendering them as text, and the copy button for the recommended code.
// Must not: run anything or talk to the kernel.

import { h } from "./dom.js";
import { shortPath } from "./graphpane.js";

export function hasAdvisor(report) {
  return (report.candidates || []).length > 0 || !!report.recommendation;
}

export function renderAdvisor(report) {
  const rec = report.recommendation;
  const tone = { improved: "good", worse: "bad", failed: "bad", no_change: "neutral", rejected: "neutral", skipped: "neutral" };
  const copy = (text, btn) => {
    const done = () => { btn.textContent = "copied"; setTimeout(() => { btn.textContent = "copy"; }, 1200); };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => { btn.textContent = "select and copy"; });
  };
  return h("div", { class: "nsv-advisor" },
    rec ? h("div", { class: "nsv-rec" },
      h("div", { class: "nsv-section-title" }, "Recommendation"),
      h("div", null, `Trace ${rec.functions.join(", ")} non-strictly: breaks ${rec.breaks_before} → ${rec.breaks_after}, `,
        rec.outputs_match == null ? "outputs not checked" : rec.outputs_match ? "outputs match" : "outputs differ"),
      h("div", { class: "nsv-code-wrap" }, h("pre", { class: "nsv-pre" }, rec.code),
        (() => { const b = h("button", { class: "nsv-btn nsv-btn-small", type: "button", onclick: () => copy(rec.code, b) }, "copy"); return b; })()))
      : h("div", { class: "nsv-muted nsv-pad" }, "No recommendation: no candidate reduced the breaks with matching outputs."),
    h("div", { class: "nsv-section-title" }, `Candidates (${(report.candidates || []).length})`),
    h("table", { class: "nsv-table" },
      h("thead", null, h("tr", null, ["function", "status", "why", "breaks", "outputs", "notes"].map((t) => h("th", null, t)))),
      h("tbody", null, (report.candidates || []).map((c) => h("tr", { "data-status": c.status },
        h("td", { class: "nsv-mono" }, c.function, c.file ? h("div", { class: "nsv-muted nsv-small" }, `${shortPath(c.file)}:${c.line ?? ""}`) : null),
        h("td", null, h("span", { class: `nsv-chip nsv-chip-${tone[c.status] || "neutral"}` }, c.status.replace("_", " "))),
        h("td", null, c.why),
        h("td", null, c.breaks_before != null ? `${c.breaks_before} → ${c.breaks_after ?? "?"}` : "—"),
        h("td", null, c.outputs_match == null ? "—" : c.outputs_match ? "match" : "differ"),
        h("td", null, [...(c.precheck || []), c.error ? `${c.gb_id ? c.gb_id + ": " : ""}${c.error}` : null, c.elapsed_s != null ? `${c.elapsed_s.toFixed(1)} s` : null].filter(Boolean).join(" · ")))))));
}
