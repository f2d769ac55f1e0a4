// ui/advisor.js — the advisor's candidates and its recommendation (report.candidates and
//   report.recommendation), shown only when present, and what its time budget left untried
//   (report.advisor_untried).
// Owns: rendering them as text, and the copy button for the recommended code.
// Must not: run anything or talk to the kernel.

import { h } from "./dom.js";
import { where } from "./format.js";

export function hasAdvisor(report) {
  return (report.candidates || []).length > 0 || !!report.recommendation;
}

const KIND_TITLES = {
  nonstrict: "trace this function non-strictly",
  config: "set the config flags in the code below",
  adapter: "trace it non-strictly through an adapter that drops its None arguments (code below)",
  pytree: "register the class with torch.utils._pytree and trace the function non-strictly (code below)",
  rewrite: "replace the function with the rewritten def in the code below (outputs checked against eager)",
};

// What a recommendation applies, in words: marks, adapters, pytree classes, config flags.
export function recommendedParts(rec) {
  const parts = [];
  if ((rec.functions || []).length) parts.push(`Trace ${rec.functions.join(", ")} non-strictly`);
  if ((rec.adapters || []).length) parts.push(`trace ${rec.adapters.join(", ")} through an adapter (None arguments)`);
  if ((rec.pytree || []).length) parts.push(`register ${rec.pytree.join(", ")} with torch.utils._pytree`);
  if ((rec.config || []).length) parts.push(`set ${rec.config.map((f) => `${f}=True`).join(", ")}`);
  return parts.length ? parts : ["Apply the code below"];
}

// What the verified attempt changed: the graphs first (what an improvement is judged on,
// nstviz/analysis/improvement.py), then distinct breaks and Dynamo's own graph-break count
// (a flag can remove every counted graph break yet leave as many graphs, or list more sites).
export function recommendationEffect(rec) {
  const parts = [];
  if (rec.graphs_before != null && rec.graphs_after != null) parts.push(`graphs ${rec.graphs_before} → ${rec.graphs_after}`);
  if (rec.eager_frames_before != null && rec.eager_frames_before !== rec.eager_frames_after) parts.push(`frames run eagerly ${rec.eager_frames_before} → ${rec.eager_frames_after}`);
  parts.push(`breaks ${rec.breaks_before} → ${rec.breaks_after}`);
  if (rec.graph_breaks_before != null && rec.graph_breaks_after != null) parts.push(`graph breaks ${rec.graph_breaks_before} → ${rec.graph_breaks_after}`);
  return parts.join(", ");
}

// Candidate.error is what the attempt did, in words: an error only for a failed or worse
// attempt; an improvement ("9 -> 3 graphs") reads in the good colour, no change in muted.
export function outcomeClass(status) {
  if (status === "improved") return "nsv-cand-outcome nsv-good";
  if (status === "failed" || status === "worse") return "nsv-cand-outcome nsv-error-line";
  return "nsv-cand-outcome nsv-muted";
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
      h("div", { class: "nsv-rec-effect" }, `${recommendedParts(rec).join("; ")}: ${recommendationEffect(rec)}, `,
        rec.outputs_match == null ? "outputs not checked" : rec.outputs_match ? "outputs match" : "outputs differ"),
      h("div", { class: "nsv-code-wrap" }, h("pre", { class: "nsv-pre" }, rec.code),
        (() => { const b = h("button", { class: "nsv-btn nsv-btn-small", type: "button", onclick: () => copy(rec.code, b) }, "copy"); return b; })()))
      : h("div", { class: "nsv-muted nsv-pad nsv-no-rec" }, (report.runs || {}).nonstrict
        ? "No recommendation: no candidate reduced the breaks with matching outputs."
        : "No recommendation: no candidate reduced the breaks with matching outputs, so nothing was marked and the nonstrict run was not made."),
    // what the time budget left untried (Report.advisor_untried, one line written by the capture)
    report.advisor_untried ? h("div", { class: "nsv-muted nsv-pad nsv-advisor-untried", "data-testid": "advisor-untried" },
      `Not tried: ${report.advisor_untried}`) : null,
    h("div", { class: "nsv-section-title" }, `Candidates (${(report.candidates || []).length})`),
    (report.candidates || []).map((c) => h("div", { class: "nsv-cand", "data-status": c.status },
      h("div", { class: "nsv-cand-head" },
        h("span", { class: "nsv-cand-kind nsv-chip nsv-chip-neutral", title: KIND_TITLES[c.kind] || KIND_TITLES.nonstrict }, c.kind || "nonstrict"),
        h("span", { class: "nsv-mono nsv-cand-fn" }, c.function),
        h("span", { class: `nsv-chip nsv-chip-${tone[c.status] || "neutral"}` }, c.status.replace("_", " "))),
      h("div", { class: "nsv-cand-why" }, c.why),
      h("div", { class: "nsv-muted nsv-small" }, [
        c.file ? where(c.file, c.line) : null,
        c.breaks_before != null ? `breaks ${c.breaks_before} → ${c.breaks_after ?? "?"}` : null,
        c.outputs_match == null ? null : c.outputs_match ? "outputs match" : "outputs differ",
        c.run ? `run ${c.run}` : null,
        c.elapsed_s != null ? `${c.elapsed_s.toFixed(1)} s` : null,
      ].filter(Boolean).join(" · ")),
      c.code ? h("pre", { class: "nsv-pre nsv-cand-code" }, c.code) : null,
      (c.precheck || []).length ? h("ul", { class: "nsv-hints" }, c.precheck.map((t) => h("li", null, t))) : null,
      c.error ? h("div", { class: outcomeClass(c.status) }, `${c.gb_id ? c.gb_id + ": " : ""}${c.error}`) : null)));
}
