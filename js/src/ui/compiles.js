// ui/compiles.js — the Compiles tab: every Dynamo compile of every run (tlparse's compile
//   directory) and the detail of one (tlparse's compile page): the frame's function and
//   file:line, its graphs (node and op counts, links that open them), the breaks it hit, why it
//   compiled (the failing guards of earlier compiles), its time, guards and failure.
// Owns: rendering run.compiles as the Report holds them (Compile records, with their derived
//   recompile / limit_hit flags computed in Python), compile links (compileLink) and the lookup of
//   a compile id (contract/compileid.js; one without an attempt = that compile's last attempt).
// Must not: change the graph panes, the selection or the tab itself (it calls the callbacks it
//   is given); derive facts of its own beyond counting what a record lists.

import { compileIdOf, compileIdText, namesFrameCompile } from "../contract/compileid.js";
import { LEVEL_NAMES } from "../contract/decode.js";
import { clear, h } from "./dom.js";
import { where } from "./format.js";

/**
 * The compile of `runData` that compile id `cid` names: the same attempt, else (an id without
 * an attempt, as breaks name the compile that hit them) the compile's last attempt. Or null.
 */
export function findCompile(runData, cid) {
  if (!cid || typeof cid !== "object") return null;
  const same = ((runData && runData.compiles) || []).filter((c) => namesFrameCompile(cid, c));
  const attempt = cid.attempt || 0;
  return same.find((c) => (c.attempt || 0) === attempt)
    || (!attempt ? same.reduce((best, c) => (!best || (c.attempt || 0) > (best.attempt || 0) ? c : best), null) : null);
}

/** A link (button) showing compile id `cid`; `onOpen(run, cid)` opens its detail. */
export function compileLink(run, cid, onOpen, label) {
  const text = compileIdText(cid);
  return h("button", { class: "nsv-linkish nsv-mono nsv-compile-link", type: "button", "data-run": run, "data-compile": text,
    title: `what Dynamo recorded for compile ${text} (Compiles tab)`, onclick: () => onOpen(run, cid) }, label || text);
}

const BREAKS_BY_COMPILE = new WeakMap();

/** Indices of the breaks of `runData` hit by compile `c` (breaks name "F/C", any attempt). */
function breaksOf(runData, c) {
  let byCompile = BREAKS_BY_COMPILE.get(runData);
  if (!byCompile) { // once per run: breaks x their compile ids, not per compile shown
    byCompile = new Map();
    (runData.breaks || []).forEach((b, i) => {
      for (const cid of b.compile_ids || []) {
        if (!cid || typeof cid !== "object") continue;
        const key = `${cid.frame_id}/${cid.frame_compile_id}`;
        const list = byCompile.get(key) || [];
        if (!list.includes(i)) list.push(i);
        byCompile.set(key, list);
      }
    });
    BREAKS_BY_COMPILE.set(runData, byCompile);
  }
  return byCompile.get(`${c.frame_id}/${c.compile_id}`) || [];
}

function seconds(x) {
  if (x == null || Number.isNaN(+x)) return null;
  const v = +x;
  return v >= 10 ? `${v.toFixed(1)} s` : v >= 0.01 ? `${v.toFixed(2)} s` : `${(v * 1000).toFixed(1)} ms`;
}

function firstLine(text) {
  return String(text || "").split("\n").map((s) => s.trim()).find(Boolean) || "";
}

/** The refused compile's limit as torch's message says it ("currently set to 2"), or "". */
function limitOf(c) {
  const m = /currently set to (\d+)/.exec(c.fail_reason || "");
  return m ? ` (${m[1]})` : "";
}

/** What became of a compile, in a few words, and its marker chips. */
function outcome(runData, c, nBreaks) {
  const fn = c.qualname || c.function || "this frame";
  if (c.limit_hit) return { text: `refused: the frame hit torch._dynamo.config.recompile_limit${limitOf(c)}; ${fn} runs eagerly from then on`, tone: "bad" };
  const graphs = (c.graph_ids || []).length;
  if (c.fail_reason && !graphs && !nBreaks) return { text: `failed${c.fail_type ? ` (${c.fail_type})` : ""}: ${firstLine(c.fail_reason)}`, tone: "bad" };
  if (!graphs) return { text: nBreaks ? "made no graph of its own (it hit a graph break)" : "made no graph (nothing to compile)", tone: "neutral" };
  return { text: `compiled ${graphs} graph${graphs === 1 ? "" : "s"}`, tone: "good" };
}

function markers(c, failed) {
  return [
    c.limit_hit ? h("span", { class: "nsv-chip nsv-chip-bad", title: "refused: the frame hit recompile_limit and runs eagerly from then on" }, "recompile limit") : null,
    c.recompile && !c.limit_hit ? h("span", { class: "nsv-chip nsv-chip-remaining", title: "compiled again: a guard of an earlier compile of this frame failed" }, "recompile") : null,
    failed ? h("span", { class: "nsv-chip nsv-chip-bad", title: "the compile failed" }, "failed") : null,
  ];
}

export class CompilesPanel {
  /**
   * @param {any} report
   * @param {import("../contract/decode.js").ReportIndex} index
   * @param {{onGraph(run:string, id:string):void, onBreak(run:string, i:number):void, onFrame(loc:any):void}} cb
   */
  constructor(report, index, cb) {
    this.report = report;
    this.index = index;
    this.cb = cb;
    this.el = h("div", { class: "nsv-compiles" });
    this.showList();
  }

  /** The list of every compile of every run, in the order Dynamo made them. */
  showList() {
    clear(this.el);
    this.el.appendChild(h("div", { class: "nsv-muted nsv-small nsv-compiles-intro" },
      "Every frame compile Dynamo made (tlparse's ids: frame/compile, _attempt after a restart). Click one for what Dynamo recorded."));
    for (const run of this.index.runNames) {
      const runData = this.index.run(run) || {};
      const compiles = runData.compiles || [];
      const rec = compiles.filter((c) => c.recompile).length;
      const lim = compiles.filter((c) => c.limit_hit).length;
      const extra = [rec ? `${rec} recompile${rec === 1 ? "" : "s"}` : null, lim ? `${lim} at recompile_limit` : null].filter(Boolean).join(", ");
      this.el.appendChild(h("div", { class: "nsv-section-title" }, `${run} · ${compiles.length} compile${compiles.length === 1 ? "" : "s"}${extra ? ` (${extra})` : ""}`));
      if (!compiles.length) this.el.appendChild(h("div", { class: "nsv-muted nsv-pad" }, "No compiles recorded."));
      for (const c of compiles) this.el.appendChild(this.row(run, runData, c));
    }
  }

  row(run, runData, c) {
    const cid = compileIdOf(c), id = compileIdText(cid);
    const nBreaks = breaksOf(runData, c).length;
    const out = outcome(runData, c, nBreaks);
    const loc = c.location;
    const nGraphs = (c.graph_ids || []).filter((g) => this.index.graph(run, g)).length;
    const facts = [`${nGraphs} graph${nGraphs === 1 ? "" : "s"}`, nBreaks ? `${nBreaks} break${nBreaks === 1 ? "" : "s"}` : null].filter(Boolean).join(" · ");
    const time = seconds(c.compile_time_s);
    return h("div", { class: "nsv-compile-row", "data-run": run, "data-compile": id },
      h("div", { class: "nsv-compile-line" },
        h("button", { class: "nsv-linkish nsv-mono nsv-compile-id", type: "button", "data-fit": "", title: `open compile ${id}`, onclick: () => this.showDetail(run, cid) }, id),
        h("span", { class: "nsv-compile-fn", title: c.function || "" }, c.qualname || c.function || "?"),
        markers(c, out.tone === "bad" && !c.limit_hit),
        time ? h("span", { class: "nsv-compile-time nsv-muted", "data-fit": "", title: "entire frame compile time" }, time) : null),
      h("div", { class: "nsv-compile-sub nsv-small" },
        loc ? h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => this.cb.onFrame(loc) }, where(loc.file, loc.line)) : h("span", { class: "nsv-muted" }, "no file recorded"),
        h("span", { class: "nsv-muted" }, ` · ${facts}`)));
  }

  /** Show compile `cid` (a compile id) of `run`; false when the Report has no such compile. */
  showDetail(run, cid) {
    const runData = this.index.run(run);
    const c = runData && findCompile(runData, cid);
    if (!c) return false;
    clear(this.el);
    this.el.appendChild(this.detail(run, runData, c));
    this.el.scrollTop = 0;
    if (this.el.parentElement) this.el.parentElement.scrollTop = 0;
    return true;
  }

  detail(run, runData, c) {
    const id = compileIdText(compileIdOf(c));
    const cb = this.cb;
    const breaks = breaksOf(runData, c);
    const out = outcome(runData, c, breaks.length);
    const loc = c.location;
    const rows = [
      ["run", run],
      ["function", (c.qualname || c.function || "?") + (c.qualname && c.function && !c.qualname.endsWith(c.function) ? ` (Dynamo's frame: ${c.function})` : "")],
      ["file", loc ? h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => cb.onFrame(loc) }, where(loc.file, loc.line)) : "not recorded"],
      ["outcome", h("span", { class: out.tone === "bad" ? "nsv-bad" : out.tone === "good" ? "nsv-good" : "" }, out.text)],
    ];
    const time = seconds(c.compile_time_s);
    if (time) rows.push(["compile time", time + (c.backend_compile_time_s != null ? `, of which backend ${seconds(c.backend_compile_time_s)}` : "")]);
    if (c.cache_size != null) rows.push(["compiled before", c.cache_size ? `${c.cache_size} compiled version${c.cache_size === 1 ? "" : "s"} of this frame existed` : "none: the frame's first compile"]);
    if (c.guard_count != null) rows.push(["guards", String(c.guard_count)]);
    if (c.fail_type && out.tone === "bad") rows.push(["fail type", c.fail_type]);
    if (c.fail_location) rows.push(["failed at", h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => cb.onFrame(c.fail_location) }, where(c.fail_location.file, c.fail_location.line))]);
    const graphs = (c.graph_ids || []).map((gid) => this.index.graph(run, gid)).filter(Boolean);
    return h("div", { class: "nsv-compile-detail", "data-run": run, "data-compile": id },
      h("button", { class: "nsv-btn nsv-btn-small nsv-compiles-back", type: "button", onclick: () => this.showList() }, "← all compiles"),
      h("div", { class: "nsv-compile-title" }, h("span", { class: "nsv-mono" }, `compile ${id}`), " · ", h("strong", null, c.qualname || c.function || "?"), markers(c, out.tone === "bad" && !c.limit_hit)),
      h("dl", { class: "nsv-kv nsv-kv-wide" }, rows.map(([k, v]) => [h("dt", null, k), h("dd", null, v)])),
      this.why(run, c),
      h("div", { class: "nsv-section-title" }, `graphs (${graphs.length})`),
      graphs.length ? h("div", { class: "nsv-compile-graphs" }, graphs.map((g) =>
        h("button", { class: "nsv-btn nsv-btn-small nsv-compile-graph", type: "button", "data-graph": g.id, title: `open ${g.id} in the graph pane`, onclick: () => cb.onGraph(run, g.id) },
          `${LEVEL_NAMES[g.level] || g.level} · ${g.nodes.length} nodes · ${g.op_count ?? "?"} ops`)))
        : h("div", { class: "nsv-muted nsv-small" }, "This compile made no graph."),
      h("div", { class: "nsv-section-title" }, `breaks it hit (${breaks.length})`),
      breaks.length ? h("ul", { class: "nsv-compile-breaks" }, breaks.map((i) => {
        const b = runData.breaks[i];
        const bl = b.location || {};
        return h("li", null, h("button", { class: "nsv-linkish", type: "button", onclick: () => cb.onBreak(run, i) }, b.gb_type || b.reason),
          h("span", { class: "nsv-muted nsv-mono" }, ` ${where(bl.file, bl.line)}`));
      })) : h("div", { class: "nsv-muted nsv-small" }, "None."),
      (c.restart_reasons || []).length ? [h("div", { class: "nsv-section-title" }, "restarts (Dynamo traced the frame again)"),
        (c.restart_reasons || []).map((t) => h("pre", { class: "nsv-pre" }, t))] : null,
      c.fail_reason ? [h("div", { class: "nsv-section-title" }, "fail reason"), h("pre", { class: "nsv-pre" }, c.fail_reason)] : null,
      (c.stack || []).length ? [h("div", { class: "nsv-section-title" }, "called from (outermost first)"),
        h("ol", { class: "nsv-stack" }, c.stack.map((f) => h("li", null,
          h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => cb.onFrame(f) }, where(f.file, f.line)),
          h("span", { class: "nsv-muted" }, ` ${f.function}`), f.code ? h("div", { class: "nsv-code-line" }, f.code) : null)))] : null,
      (c.guards || []).length ? h("details", { class: "nsv-compile-guards" }, h("summary", null, `guards Dynamo installed (${c.guard_count ?? c.guards.length}${c.guard_count && c.guard_count > c.guards.length ? `, first ${c.guards.length} lines` : ""})`),
        h("pre", { class: "nsv-pre" }, c.guards.join("\n"))) : null);
  }

  /** Why this compile happened: the guard failures of earlier compiles (TORCH_LOGS=recompiles). */
  why(run, c) {
    const fails = c.guard_failures || [];
    const title = h("div", { class: "nsv-section-title" }, "why it compiled");
    if (fails.length) {
      return [title,
        h("div", { class: "nsv-small" }, `Recompiling ${c.qualname || c.function || "the frame"}: ${fails.length === 1 ? "a guard" : "guards"} of earlier compiles failed (as TORCH_LOGS=recompiles lists them):`),
        h("ul", { class: "nsv-guard-failures" }, fails.map((g) => h("li", null,
          g.compile_id ? compileLink(run, g.compile_id, (r, i) => this.showDetail(r, i)) : null,
          g.compile_id ? ": " : null,
          h("code", { class: "nsv-mono nsv-guard" }, g.guard),
          g.code || g.location ? h("div", { class: "nsv-small nsv-muted" }, g.code ? h("span", { class: "nsv-mono" }, g.code) : null,
            g.location ? [" at ", h("button", { class: "nsv-linkish nsv-mono", type: "button", onclick: () => this.cb.onFrame(g.location) }, where(g.location.file, g.location.line))] : null) : null)))];
    }
    if (c.recompile_reason) return [title, h("pre", { class: "nsv-pre" }, c.recompile_reason)];
    if (c.cache_size === 0 || (c.cache_size == null && c.compile_id === 0)) return [title, h("div", { class: "nsv-small" }, "The frame's first compile: its first call.")];
    return null;
  }
}

/** Make `btn` (the graph pane's compile link) name the compile of graph record `g` (`btn.compileId`). */
export function setCompileLink(btn, g) {
  btn.compileId = compileIdOf(g);
  const id = compileIdText(btn.compileId);
  btn.dataset.compile = id;
  btn.replaceChildren(h("span", { class: "nsv-pane-compile-word" }, "compile "), id); // the word goes in narrow panes
  btn.title = `what Dynamo recorded for compile ${id}: function, file, why it compiled, guards, time (Compiles tab)`;
}
