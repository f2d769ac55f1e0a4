// ui/breaks.js — the list of distinct graph breaks of every run, with status from the diff.
// Owns: rendering breaks (status, GB id link, graph breaks caused and times reached, reason,
//   hints, explanation, user stack, graphs either side), in the Report's rank order (run.break_order)
//   with the Report's count texts (break.tally), and reporting a selection through the callbacks.
// Must not: change the graph panes or the source pane itself.

import { clear, h, safeUrl } from "./dom.js";
import { CAUSED_HELP, REACHED_HELP, inRankOrder, tallyOf, where } from "./format.js";
import { sourceExcerpt } from "./source.js";
import { breakable } from "./wrap.js";
import { compileLink } from "./compiles.js";

/**
 * @param {HTMLElement} host
 * @param {any} report
 * @param {import("../contract/decode.js").ReportIndex} index
 * @param {{onSelect(run:string, i:number):void, onGraph(run:string, id:string):void, onFrame(loc:any):void}} cb
 */
export function renderBreaks(host, report, index, cb) {
  clear(host);
  let total = 0;
  for (const run of index.runNames) {
    const runData = index.run(run) || {};
    const breaks = runData.breaks || [];
    total += breaks.length;
    const head = h("div", { class: "nsv-section-title" }, `${run} · ${breaks.length} distinct break${breaks.length === 1 ? "" : "s"}`);
    host.appendChild(head);
    if (!breaks.length) {
      host.appendChild(h("div", { class: "nsv-muted nsv-pad" }, run === "baseline" ? "No graph breaks." : "No graph breaks: one graph per compiled frame."));
      continue;
    }
    for (const { b, i } of inRankOrder(runData)) {
      const tally = tallyOf(b);
      const status = index.breakStatus(run, b);
      const loc = b.location || {};
      const link = safeUrl(b.link || "");
      const item = h("div", { class: "nsv-break", "data-run": run, "data-index": String(i), "data-status": status || "none" },
        h("button", { class: "nsv-break-head", type: "button", "aria-expanded": "false", onclick: () => cb.onSelect(run, i) },
          h("span", { class: `nsv-chip nsv-chip-${status || "none"}` }, status || (b.fatal ? "fatal" : "break")),
          b.fatal ? h("span", { class: "nsv-chip nsv-chip-fatal" }, "fullgraph") : null,
          h("span", { class: "nsv-break-reason" }, breakable(b.gb_type || b.reason)),
          tally.caused_text ? h("span", { class: "nsv-count", title: CAUSED_HELP }, tally.caused_text) : null,
          tally.reached != null ? h("span", { class: "nsv-count nsv-muted", title: REACHED_HELP }, `reached ${tally.reached}×`) : null),
        h("div", { class: "nsv-break-meta" },
          b.gb_id ? (link ? h("a", { href: link, target: "_blank", rel: "noopener noreferrer", class: "nsv-gb" }, b.gb_id) : h("span", { class: "nsv-gb" }, b.gb_id)) : null,
          h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => cb.onFrame(loc) }, where(loc.file, loc.line)),
          h("span", { class: "nsv-muted" }, ` in ${loc.function ?? "?"}`)),
        h("div", { class: "nsv-break-body" },
          tally.splits_text ? h("div", { class: "nsv-break-text nsv-break-splits", title: CAUSED_HELP },
            `${tally.caused_text}: ${tally.splits_text}`) : null,
          cb.onCompile && (b.compile_ids || []).length ? h("div", { class: "nsv-break-text nsv-break-compiles" }, h("span", { class: "nsv-muted" }, "compiles that hit it: "),
            b.compile_ids.slice(0, 12).map((cid) => [compileLink(run, cid, cb.onCompile), " "]),
            b.compile_ids.length > 12 ? h("span", { class: "nsv-muted" }, `… ${b.compile_ids.length - 12} more (Compiles tab)`) : null) : null,
          sourceExcerpt(index, loc, cb.onFrame),
          b.gb_type && b.reason !== b.gb_type ? h("div", { class: "nsv-break-text" }, b.reason) : null,
          b.root_cause ? h("div", { class: "nsv-break-text" }, `root cause: ${b.root_cause}`) : null,
          b.explanation ? h("div", { class: "nsv-break-text nsv-muted" }, b.explanation) : null,
          (b.hints || []).length ? h("ul", { class: "nsv-hints" }, b.hints.map((t) => h("li", null, t))) : null,
          b.advice ? h("div", { class: "nsv-break-text nsv-break-advice" }, `what else: ${b.advice}`) : null,
          (b.stack || []).length ? renderStack(b.stack, cb.onFrame) : null,
          b.graph_before || b.graph_after ? h("div", { class: "nsv-either-side" },
            h("span", { class: "nsv-muted" }, "graphs: "),
            b.graph_before ? h("button", { class: "nsv-btn nsv-btn-small", type: "button", onclick: () => cb.onGraph(run, b.graph_before) }, `before · ${b.graph_before}`) : null,
            b.graph_after ? h("button", { class: "nsv-btn nsv-btn-small", type: "button", onclick: () => cb.onGraph(run, b.graph_after) }, `after · ${b.graph_after}`) : null)
            : graphButtons(run, cb.graphsOfCompiles ? cb.graphsOfCompiles(run, b.compile_ids || []) : [], cb),
          b.detail && b.detail !== b.reason ? h("details", null, h("summary", null, "full message"), h("pre", { class: "nsv-pre" }, b.detail)) : null));
      host.appendChild(item);
    }
  }
  return total;
}

/**
 * The Breaks tab's badge: distinct breaks of the runs compared (baseline and nonstrict, or a
 * single run's), not the advisor's attempts (listed in the tab, but trials, not the code).
 * @returns {{n:number, title:string}}
 */
export function breakBadge(index) {
  const compared = index.runNames.filter((n) => !/^attempt-/.test(n));
  const per = compared.map((n) => [n, ((index.run(n) || {}).breaks || []).length]);
  const n = per.reduce((s, [, k]) => s + k, 0);
  const attempts = index.runNames.length - compared.length;
  return { n, title: per.map(([r, k]) => `${k} in ${r}`).join(", ") + (attempts ? "; the advisor's attempts are not counted" : "") };
}

/** Mark break (run, i) as selected in the list. */
export function markSelectedBreak(host, sel) {
  for (const el of host.querySelectorAll(".nsv-break")) {
    const on = sel && el.dataset.run === sel.run && el.dataset.index === String(sel.index);
    el.classList.toggle("nsv-selected", !!on);
    el.querySelector(".nsv-break-head").setAttribute("aria-expanded", on ? "true" : "false");
    if (on) el.scrollIntoView({ block: "nearest" });
  }
}

/** A user stack, innermost frames shown; outer frames behind a "show" toggle. */
export function renderStack(stack, onFrame, keep = 4) {
  const item = (f, k) => h("li", { value: String(k + 1) },
    h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => onFrame(f) }, where(f.file, f.line)),
    h("span", { class: "nsv-muted" }, ` ${f.function}`), f.code ? h("div", { class: "nsv-code-line" }, f.code) : null);
  const hidden = Math.max(0, stack.length - keep);
  const list = h("ol", { class: "nsv-stack" }, stack.slice(hidden).map((f, k) => item(f, hidden + k)));
  if (!hidden) return list;
  const more = h("button", { class: "nsv-linkish nsv-small", type: "button", onclick: () => {
    list.replaceChildren(...stack.map((f, k) => item(f, k)));
    more.remove();
  } }, `show ${hidden} outer frame${hidden === 1 ? "" : "s"}`);
  return h("div", { class: "nsv-stack-wrap" }, h("div", { class: "nsv-section-title nsv-stack-title" }, "user stack (innermost last) ", more), list);
}

function graphButtons(run, ids, cb) {
  if (!ids.length) return null;
  return h("div", { class: "nsv-either-side" }, h("span", { class: "nsv-muted" }, "graphs of the compiles that hit it: "),
    ids.slice(0, 6).map((id) => h("button", { class: "nsv-btn nsv-btn-small", type: "button", onclick: () => cb.onGraph(run, id) }, id)));
}
