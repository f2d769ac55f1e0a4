// ui/source.js — the user's source with gutter marks.
// Owns: rendering report.sources[file] line by line (as text), gutter marks for breaking
//   lines per run, bodies of functions traced non-strictly, and the lines of the selected
//   node's user stack; scrolling to a line.
// Must not: select anything by itself except through the onLine callback.

import { clear, h } from "./dom.js";
import { shortPath, where } from "./format.js";

export class SourcePane {
  constructor(report, index) {
    this.report = report;
    this.index = index;
    this.files = Object.keys(report.sources || {});
    this.file = this.files[0] || null;
    this.picker = h("select", { class: "nsv-select", "aria-label": "source file", onchange: () => this.showFile(this.picker.value) },
      this.files.map((f) => h("option", { value: f }, shortPath(f))));
    this.legend = h("div", { class: "nsv-src-legend" },
      h("span", { class: "nsv-mark nsv-mark-break-baseline" }), "breaks in baseline ",
      h("span", { class: "nsv-mark nsv-mark-break-nonstrict" }), "breaks in nonstrict ",
      h("span", { class: "nsv-mark nsv-mark-nonstrict" }), "traced non-strictly ",
      h("span", { class: "nsv-mark nsv-mark-node" }), "selected node");
    this.body = h("div", { class: "nsv-src", role: "list" });
    this.el = h("div", { class: "nsv-src-pane" }, h("div", { class: "nsv-src-bar" }, this.picker), this.legend, this.body);
    this.nodeLines = new Map();
    this.marks = this.computeMarks();
    if (!this.files.length) this.body.appendChild(h("div", { class: "nsv-muted nsv-pad" }, "The Report holds no source text."));
    else this.showFile(this.file);
  }

  computeMarks() {
    const m = new Map(); // file -> Map(line -> Set(class))
    const add = (file, line, cls, title) => {
      if (!file || !line) return;
      let f = m.get(file);
      if (!f) m.set(file, (f = new Map()));
      let s = f.get(line);
      if (!s) f.set(line, (s = { cls: new Set(), titles: [] }));
      s.cls.add(cls);
      if (title) s.titles.push(title);
    };
    for (const run of this.index.runNames) {
      const cls = run === "baseline" ? "break-baseline" : "break-nonstrict";
      for (const b of this.index.run(run).breaks || []) {
        const l = b.location || {};
        add(l.file, l.line, cls, `${run}: ${b.gb_id ? b.gb_id + " " : ""}${b.gb_type || b.reason}`);
      }
      const spans = [...(this.index.run(run).marked || []), ...(this.index.run(run).regions || [])];
      for (const r of spans) {
        if (r.file && r.line_start) {
          for (let ln = r.line_start; ln <= (r.line_end || r.line_start); ln++) add(r.file, ln, "nonstrict", `traced non-strictly: ${r.qualname || r.function}`);
        }
      }
    }
    return m;
  }

  showFile(file) {
    this.file = file;
    this.picker.value = file;
    clear(this.body);
    const src = this.index.source(file);
    if (!src) return;
    const marks = this.marks.get(file) || new Map();
    const lines = src.text.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    const frag = document.createDocumentFragment();
    this.rows = [];
    lines.forEach((text, k) => {
      const ln = k + 1;
      const mk = marks.get(ln);
      const row = h("div", { class: "nsv-src-row", role: "listitem", "data-line": String(ln), title: mk && mk.titles.length ? mk.titles.join("\n") : null },
        h("span", { class: "nsv-gutter" }, h("span", { class: "nsv-ln" }, String(ln)), h("span", { class: "nsv-marks" })),
        h("span", { class: "nsv-src-text" }, text.length > 2000 ? text.slice(0, 2000) + " …" : text));
      if (mk) for (const c of mk.cls) row.classList.add(`nsv-l-${c}`);
      this.rows.push(row);
      frag.appendChild(row);
    });
    if (src.truncated) frag.appendChild(h("div", { class: "nsv-muted nsv-pad" }, "(source truncated)"));
    this.body.appendChild(frag);
    this.applyNodeLines();
  }

  /** Lines of the selected node's stack: Map(file -> Set(line)). */
  setNodeLines(frames) {
    this.nodeLines = new Map();
    for (const f of frames || []) {
      if (!f || !f.file) continue;
      let s = this.nodeLines.get(f.file);
      if (!s) this.nodeLines.set(f.file, (s = new Set()));
      s.add(f.line);
    }
    this.applyNodeLines();
  }

  applyNodeLines() {
    if (!this.rows) return;
    const s = this.nodeLines.get(this.file) || new Set();
    this.rows.forEach((row, k) => row.classList.toggle("nsv-l-node", s.has(k + 1)));
  }

  /** Show `file` and scroll `line` into view, flashing it. */
  reveal(file, line) {
    if (!file || !this.index.source(file)) return false;
    if (file !== this.file) this.showFile(file);
    const row = this.rows && this.rows[line - 1];
    if (!row) return false;
    for (const r of this.body.querySelectorAll(".nsv-l-focus")) r.classList.remove("nsv-l-focus");
    row.classList.add("nsv-l-focus");
    const top = row.offsetTop - this.body.clientHeight / 3;
    this.body.scrollTop = Math.max(0, top);
    return true;
  }
}

/**
 * A few lines of source around `loc` (the line itself highlighted), or null when the Report
 * has no text for that file. Clicking it calls `onOpen(loc)` (show it in the Source tab).
 */
export function sourceExcerpt(index, loc, onOpen, radius = 2, tone = "break") {
  if (!loc || !loc.file || !loc.line) return null;
  const src = index.source(loc.file);
  if (!src) return null;
  const lines = src.text.split("\n");
  const from = Math.max(1, loc.line - radius), to = Math.min(lines.length, loc.line + radius);
  if (loc.line > lines.length) return null;
  const rows = [];
  for (let ln = from; ln <= to; ln++) {
    const text = lines[ln - 1];
    rows.push(h("div", { class: `nsv-src-row${ln === loc.line ? ` nsv-l-excerpt nsv-l-excerpt-${tone}` : ""}` },
      h("span", { class: "nsv-gutter" }, h("span", { class: "nsv-ln" }, String(ln))),
      h("span", { class: "nsv-src-text" }, text.length > 300 ? text.slice(0, 300) + " …" : text)));
  }
  return h("button", { class: "nsv-excerpt", type: "button", title: `open ${where(loc.file, loc.line)} in the Source tab`, onclick: () => onOpen(loc) }, rows);
}
