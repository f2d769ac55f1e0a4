// ui/timing.js — what each run costs, measured: one short block per timed run or advisor attempt
//   (graphs, compile, steady state median ± spread, eager; lines that wrap at words, so a narrow
//   side panel cuts nothing) with a bar per run (the steady-state median, its quartiles as a whisker, eager's median as a tick).
// Owns: drawing run.timing as the Report holds it (texts computed in Python: RunTiming.text,
//   compile_text, CallTiming.text; nstviz/report/timing.py).
// Must not: compute or compare timings (which run is faster, speedups): the only arithmetic
//   here is the bar's scale, the largest quartile shown.

import { h, svg } from "./dom.js";

const BAR_W = 160;
const BAR_H = 14;

/** The runs of `names` that were timed, in that order: [name, timing] pairs. */
export function timedRuns(report, names) {
  return names.map((n) => [n, ((report.runs || {})[n] || {}).timing]).filter(([, t]) => t != null && typeof t === "object");
}

function scaleOf(rows) {
  let top = 0;
  for (const [, t] of rows) {
    for (const c of [t.steady, t.eager]) if (c && c.q3_s > top) top = c.q3_s;
  }
  return top > 0 ? (BAR_W - 2) / top : 0;
}

/** One run's bar: the steady median as a bar, q1..q3 as a whisker, eager's median as a tick. */
export function timingBar(t, scale) {
  const s = t.steady;
  const parts = [];
  if (s && scale > 0) {
    parts.push(svg("rect", { class: "nsv-tbar", x: 0, y: 3, width: Math.max(1, s.median_s * scale), height: BAR_H - 6 },
      svg("title", null, `compiled: ${s.text}`)));
    parts.push(svg("line", { class: "nsv-twhisker", x1: s.q1_s * scale, x2: s.q3_s * scale, y1: BAR_H / 2, y2: BAR_H / 2 }));
  }
  const e = t.eager;
  if (e && scale > 0) {
    parts.push(svg("line", { class: "nsv-teager", x1: e.median_s * scale, x2: e.median_s * scale, y1: 0, y2: BAR_H },
      svg("title", null, `eager: ${e.text}`)));
  }
  return svg("svg", { class: "nsv-tsvg", width: BAR_W, height: BAR_H, viewBox: `0 0 ${BAR_W} ${BAR_H}`, role: "img", "aria-label": t.text }, parts);
}

/** The timing table of the Report's timed runs (`names`, in order), or null when none was timed. */
export function renderTiming(report, names) {
  const rows = timedRuns(report, names);
  if (!rows.length) return null;
  const scale = scaleOf(rows);
  const graphs = (n) => ` graph${n === 1 ? "" : "s"}`;
  return h("div", { class: "nsv-timing", "data-testid": "timing" },
    h("div", { class: "nsv-section-title" }, "Timing"),
    rows.map(([name, t]) => h("div", { class: "nsv-trun", "data-run": name, title: t.text },
      h("div", null, h("span", { class: "nsv-mono nsv-trun-name", "data-k": "run" }, name), " · ",
        h("span", { "data-k": "graphs" }, String(t.graphs)), graphs(t.graphs), " · compile ", h("span", { class: "nsv-num", "data-k": "compile" }, t.compile_text || "—"),
        t.reused ? h("span", { class: "nsv-muted", title: "the run's own compiled code was timed (no second compile): its compile figures are the captured run's, recording included" }, " (captured run)") : null),
      h("div", null, "compiled ", h("span", { "data-k": "steady" }, t.steady ? t.steady.text : "—"),
        " · eager ", h("span", { "data-k": "eager" }, t.eager ? t.eager.text : "—")),
      timingBar(t, scale))),
    h("div", { class: "nsv-muted nsv-small" },
      "bar: the compiled call's median, its quartiles as a whisker, eager's median as a tick; "
      + "recompiles while timing are said in each row's tooltip"));
}
