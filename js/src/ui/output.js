// ui/output.js — the "Output" tab: what each run printed (stdout, stderr) and the error it raised.
// Owns: ordering the runs for display and turning Run.stdout / Run.stderr / Run.error* into
// preformatted text blocks (long ones collapsed in <details>).
// Must not: put any Report string in the page other than as text (h() text children only).

import { h } from "./dom.js";

/** Lines above which a block starts collapsed. */
export const COLLAPSE_LINES = 12;

const rank = (n) => (n === "baseline" ? 0 : n === "eager" ? 1 : n === "nonstrict" ? 2 : 3);

/** Run names in display order: baseline, eager, nonstrict, then attempt-N (numeric). */
export function outputRunOrder(report) {
  return Object.keys(report.runs || {}).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b, undefined, { numeric: true }));
}

/**
 * Per-run printed output as plain data: [{ run, blocks: [{ kind, title, text, collapsed }] }].
 * Kinds: "stdout", "stderr", "error". Runs that printed nothing and raised nothing get no blocks.
 */
export function outputSections(report) {
  return outputRunOrder(report).map((name) => {
    const run = report.runs[name] || {};
    const blocks = [];
    const add = (kind, title, text) => {
      if (!text) return;
      const lines = text.replace(/\n$/, "").split("\n").length;
      blocks.push({ kind, title, text, lines, collapsed: lines > COLLAPSE_LINES || text.length > 4000 });
    };
    add("stdout", "stdout", run.stdout || "");
    add("stderr", "stderr", run.stderr || "");
    if (run.error || run.error_type) {
      const head = errorHead(run);
      const tb = run.error_traceback || "";
      blocks.push({ kind: "error", title: "raised", text: tb.replace(/\s+$/, ""), head, lines: 0, collapsed: false });
    }
    return { run: name, blocks };
  });
}

/** "Type: message", without repeating the type when the message already starts with it. */
export function errorHead(run) {
  const type = run.error_type || "", msg = run.error || "";
  if (!msg) return type || "error";
  return type && !msg.startsWith(type + ":") && msg !== type ? `${type}: ${msg}` : msg;
}

function block(b) {
  const pre = h("pre", { class: `nsv-out-pre nsv-out-${b.kind}`, "data-kind": b.kind }, b.text);
  if (b.kind === "error") {
    return h("div", { class: "nsv-out-block" }, h("div", { class: "nsv-error-line", "data-kind": "error-head" }, `raised ${b.head}`), b.text ? h("details", { class: "nsv-out-details" }, h("summary", null, "traceback"), pre) : null);
  }
  const label = `${b.title} · ${b.lines} line${b.lines === 1 ? "" : "s"}`;
  return h("details", { class: "nsv-out-details", open: !b.collapsed }, h("summary", null, label), pre);
}

/** The Output tab body. */
export function renderOutput(report) {
  const sections = outputSections(report);
  const any = sections.some((s) => s.blocks.length);
  return h("div", { class: "nsv-output nsv-pad" },
    any ? null : h("div", { class: "nsv-muted" }, "No run printed anything."),
    sections.map((s) => h("section", { class: "nsv-out-run", "data-run": s.run },
      h("div", { class: "nsv-section-title" }, s.run),
      s.blocks.length ? s.blocks.map(block) : h("div", { class: "nsv-muted nsv-small" }, "printed nothing"))));
}
