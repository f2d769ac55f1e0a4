// ui/ranks.js — the rank picker and cross-rank findings of an offline diff (`nstviz diff`).
// Owns: listing a Report's ranks (Report.rank + Report.ranks[].rank), deriving the Report
//   the viewer shows for one rank (that rank's runs/diff/counts in place of the top-level
//   ones; never mutating the input), and the picker / findings elements (text only).
// Must not: parse JSON, lay out or draw, or build markup from strings (ui/dom.js only).

import { h } from "./dom.js";

/** Ranks of a Report in display order (empty for a Report that is not per rank). */
export function rankList(report) {
  if (!report || !Array.isArray(report.ranks) || report.ranks.length === 0) return [];
  const ranks = [report.rank ?? 0, ...report.ranks.map((v) => v.rank)];
  return [...new Set(ranks)].sort((a, b) => a - b);
}

/**
 * The Report as seen for one rank: its runs, break diff and counts at the top level.
 * Everything else (stacks, sources, findings, the list of ranks) is shared. Returns the
 * input itself for its own rank or an unknown one.
 */
export function reportForRank(report, rank) {
  const own = report.rank ?? 0;
  if (rank === own) return report;
  const view = (report.ranks || []).find((v) => v.rank === rank);
  if (!view) return report;
  const others = report.ranks
    .filter((v) => v.rank !== rank)
    .concat([{ rank: own, runs: report.runs, diff: report.diff, counts: report.counts, headline: report.headline }]);
  return {
    ...report, rank, runs: view.runs || {}, diff: view.diff || {}, counts: view.counts || {},
    headline: view.headline || report.headline, ranks: others,
  };
}

/** Ranks a finding names, as a Set (for marking them in the picker). */
export function flaggedRanks(report) {
  const out = new Set();
  for (const f of report.findings || []) for (const r of f.ranks || []) out.add(r);
  return out;
}

/** A <select> of the ranks; `onPick(rank)` is called with the chosen rank (a number). */
export function renderRankPicker(report, onPick) {
  const ranks = rankList(report);
  if (!ranks.length) return null;
  const flagged = flaggedRanks(report);
  const current = report.rank ?? ranks[0];
  const select = h("select", { class: "nsv-rank-select", "aria-label": "rank", "data-testid": "rank-picker",
    onchange: () => onPick(Number(select.value)) },
    ranks.map((r) => h("option", { value: String(r), selected: r === current }, flagged.has(r) ? `rank ${r} ⚠` : `rank ${r}`)));
  return h("label", { class: "nsv-rank", title: "Show the runs of another rank of the distributed job" }, "Rank ", select);
}

/** The cross-rank findings as a list (null when there are none). */
export function renderFindings(report) {
  const findings = report.findings || [];
  if (!findings.length) return null;
  return h("div", { class: "nsv-findings", role: "note", "data-testid": "findings" },
    findings.map((f) => h("div", { class: `nsv-finding nsv-finding-${f.kind || "other"}` },
      h("div", { class: "nsv-finding-msg" }, f.message || ""),
      (f.details || []).length ? h("ul", { class: "nsv-finding-details" }, f.details.map((d) => h("li", null, d))) : null)));
}
