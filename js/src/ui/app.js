// ui/app.js — the viewer application: layout of the panels and the wiring between them.
// Owns: the top-level DOM (header, side tabs, graph area), progress and error screens,
//   the graph model cache, the panes (single / side by side / merged), search, exports,
//   the ready flag (data-nstviz-ready) and the read-only debug hook (el.__nstviz).
// Must not: parse Report JSON itself (contract/), lay out (layout/) or draw (render/);
//   it never renders Report strings as markup (ui/dom.js builds text only).

import { compileIdText, namesFrameCompile } from "../contract/compileid.js";
import { buildGraphModel, buildGraphModelSliced, inferModulesFromForward, KIND_NONSTRICT } from "../contract/graphmodel.js";
import { checkReport, decodeReport, parseReportSliced, ReportIndex } from "../contract/decode.js";
import { buildGroupTree, buildGroupTreeSliced, foldTree, foldTreeSliced } from "../layout/groups.js";
import { canvasToPng, download, sceneToSvg } from "../render/export.js";
import { graphColor, regionColor } from "../render/theme.js";
import { bindModel, Store } from "../state/store.js";
import { renderOutput } from "./output.js";
import { progressStatus, progressView } from "./progress.js";
import { hasAdvisor, renderAdvisor } from "./advisor.js";
import { breakBadge, markSelectedBreak, renderBreaks } from "./breaks.js";
import { markBreak } from "./breakmarks.js";
import { CompilesPanel } from "./compiles.js";
import { nextTask } from "../nexttask.js";
import { renderDetails } from "./details.js";
import { clear, h } from "./dom.js";
import { GraphPane } from "./graphpane.js";
import { CrossSearch } from "./crosssearch.js";
import { minimapToggle } from "./minimaptoggle.js";
import { afterShow, alignOn, attachStacks, fitDiff, linkToggle, nodeKeys, realGraph, renderDiffLegend, selectBand, showBreakInStack, sideGraph } from "./diffview.js";
import { fixStackTree, SEP } from "../contract/stack.js";
import { makeDebugHook } from "./debug.js";
import { placeBelow } from "./helpbox.js";
import { sideResizable } from "./resizer.js";
import { renderLegend } from "./legend.js";
import { SourcePane } from "./source.js";
import { renderHeadline, renderSummary } from "./summary.js";
import { renderFindings, renderRankPicker, reportForRank } from "./ranks.js";

/**
 * Nodes of graph `other` with the same target and user stack as node i of `gm`; `key(gm, i)`
 * says what "same stack" compares: a value or a list, any shared one matches (default: the stack
 * index; the app: the source lines of ui/diffview.js nodeKeys).
 */
export function correspondingNodes(gm, i, other, key = (g, j) => g.nodes[j].stack) {
  const nd = gm.nodes[i];
  const want = new Set([].concat(key(gm, i) ?? []));
  if (!want.size) return [];
  const out = [];
  for (let j = 0; j < other.n; j++) {
    const o = other.nodes[j];
    if (o.target === nd.target && [].concat(key(other, j) ?? []).some((k) => want.has(k))) out.push(j);
  }
  return out.length <= 50 ? out : [];
}

/**
 * Report JSON longer than this (characters) is parsed behind a "Reading the report" screen, in
 * tasks of its own; shorter (a 10k-node graph is ~2.8 MB) parses in ~25 ms: no screen, no pauses.
 */
const BIG_REPORT = 5e6;

export class App {
  constructor(model, el, host = {}) {
    this.model = model;
    this.el = el;
    this.host = host;
    this.cleanups = [];
    this.panes = [];
    this.cache = new Map();
    el.classList.add("nstviz");
    el.dataset.nstvizReady = "0";
    this.root = h("div", { class: "nsv-root" });
    el.appendChild(this.root);
    this.store = new Store({ selectedNode: model.get("selected_node") || {}, selectedBreak: model.get("selected_break") || {}, view: model.get("view") || {}, tab: null });
    this.cleanups.push(bindModel(model, this.store));
    this.cleanups.push(this.store.subscribe((changed, origin) => this.onStore(changed, origin)));
    const onReport = () => this.load();
    const onProgress = () => { if (!this.report) this.showProgress(); };
    const onMsg = (msg) => this.onCustom(msg);
    model.on("change:report_json", onReport);
    model.on("change:progress", onProgress);
    model.on("msg:custom", onMsg);
    this.cleanups.push(() => { model.off("change:report_json", onReport); model.off("change:progress", onProgress); model.off("msg:custom", onMsg); });
    this.themeObserver = new MutationObserver(() => this.panes.forEach((p) => p.gc.refreshTheme()));
    this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name", "class"] });
    const mq = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
    if (mq) { const f = () => this.panes.forEach((p) => p.gc.refreshTheme()); mq.addEventListener("change", f); this.cleanups.push(() => mq.removeEventListener("change", f)); }
    el.__nstviz = this.debugHook();
    this.load();
  }

  destroy() {
    this.stopClock();
    this.cleanups.forEach((f) => f());
    this.themeObserver.disconnect();
    this.panes.forEach((p) => p.destroy());
    this.panes = [];
    delete this.el.__nstviz;
    this.root.remove();
  }

  // -- loading -------------------------------------------------------------------------

  async load() {
    const text = this.model.get("report_json") || "";
    const token = (this._loadToken = (this._loadToken || 0) + 1);
    this.panes.forEach((p) => p.destroy());
    this.panes = [];
    this.cache.clear();
    this.report = null;
    this.el.dataset.nstvizReady = "0";
    delete this.el.dataset.nstvizError;
    if (this.host.loadError) { this.showError(this.host.loadError); return; } // the page's data could not be read
    if (!text) { this.showProgress(); return; }
    this.stopClock();
    this.steps = { start: performance.now() }; // page times (performance.now) of the loading steps, for timings()
    if (text.length > BIG_REPORT) {
      // big Report: say so, and parse in a task of its own
      clear(this.root);
      this.root.appendChild(h("div", { class: "nsv-progress", role: "status" }, h("div", { class: "nsv-brand" }, "nstviz"),
        h("div", { class: "nsv-progress-msg" }, `Reading the report (${(text.length / 1e6).toFixed(1)} MB)…`)));
      await nextTask();
      if (token !== this._loadToken) return;
    }
    const t0 = performance.now();
    let res;
    if (text.length > BIG_REPORT) {
      const parsed = await parseReportSliced(text, nextTask);
      if (token !== this._loadToken) return;
      await nextTask(); // the structural check in a task of its own
      if (token !== this._loadToken) return;
      res = parsed.ok ? checkReport(parsed.data) : parsed;
    } else res = decodeReport(text);
    this.decodeMs = performance.now() - t0;
    this.steps.decoded = performance.now();
    if (!res.ok) { this.showError(res.error); return; }
    this.report = res.report;
    this.index = res.index;
    attachStacks(this.index);
    this.fullReport = res.report; // offline diffs: the rank picker derives per-rank views from it
    if (text.length > BIG_REPORT) await nextTask();
    if (token !== this._loadToken) return;
    try {
      await this.build();
    } catch (e) {
      // a Report that passed the checks but still trips the viewer: say so, never half-render
      console.error(e);
      this.panes.forEach((p) => p.destroy());
      this.panes = [];
      this.report = null;
      this.showError(`The viewer could not show this Report (${e && e.message ? e.message : e}). Please report this with the Report JSON.`);
    }
  }

  showProgress() {
    this.stopClock();
    clear(this.root);
    const p = this.model.get("progress") || {};
    const view = progressView(p);
    const done = p.runs_done || 0, total = p.runs_total || 0;
    const bar = h("div", { class: "nsv-progress-bar" }, h("div", { class: "nsv-progress-fill" }));
    bar.firstChild.style.width = total && done ? `${Math.round((100 * done) / total)}%` : "30%";
    if (view.ticking && (!total || !done)) bar.classList.add("nsv-indeterminate");
    const failed = view.tone === "error" || view.tone === "interrupted";
    this.el.dataset.nstvizState = view.tone === "error" ? "error" : "progress";
    const status = h("div", { class: "nsv-muted nsv-small nsv-progress-status" }, progressStatus(p, p.elapsed_s));
    this.root.appendChild(h("div", { class: `nsv-progress${failed ? " nsv-progress-error" : ""}`, role: "status", "aria-live": "polite", "data-phase": p.phase || "" },
      h("div", { class: "nsv-brand" }, "nstviz"),
      h("div", { class: "nsv-progress-phase" }, view.title),
      p.message ? h("div", { class: "nsv-progress-msg" }, p.message) : null,
      failed ? null : bar,
      status));
    // keep the clock moving between progress messages (the kernel sends them only per phase)
    if (view.ticking && p.elapsed_s != null) {
      const t0 = performance.now(), base = Number(p.elapsed_s);
      this.clock = setInterval(() => { status.textContent = progressStatus(p, base + (performance.now() - t0) / 1000); }, 200);
    }
  }

  stopClock() {
    if (this.clock) clearInterval(this.clock);
    this.clock = null;
  }

  showError(message) {
    this.stopClock();
    clear(this.root);
    this.el.dataset.nstvizState = "error";
    this.el.dataset.nstvizError = "1";
    this.root.appendChild(h("div", { class: "nsv-fatal", role: "alert" },
      h("div", { class: "nsv-brand" }, "nstviz"),
      h("div", { class: "nsv-fatal-title" }, "This report cannot be shown"),
      h("div", { class: "nsv-fatal-msg" }, message)));
    this.el.dataset.nstvizReady = "1";
  }

  async build() {
    const r = this.report;
    clear(this.root);
    this.el.dataset.nstvizState = "report";
    // header
    const headline = renderHeadline(r, (run, id) => this.openCompile(run, id));
    const meta = [r.title || null, r.created ? r.created.replace("T", " ").replace(/\..*$/, "") : null, `torch ${r.torch_version}`, r.backend ? `backend ${r.backend}` : null].filter(Boolean).join(" · ");
    this.exportBtn = h("button", { class: "nsv-btn", type: "button", title: "Save this report as one self-contained HTML file", onclick: () => this.exportHtml() }, "Export HTML");
    this.toast = h("div", { class: "nsv-toast", role: "status", hidden: true });
    const rankPicker = renderRankPicker(r, (rank) => this.pickRank(rank));
    const header = h("header", { class: "nsv-header" },
      h("div", { class: "nsv-header-left" }, h("span", { class: "nsv-brand" }, "nstviz"), headline),
      h("div", { class: "nsv-header-right" }, rankPicker, h("span", { class: "nsv-meta", title: meta }, meta), this.exportBtn));
    // side tabs
    this.tabs = {};
    this.tabBodies = {};
    const tabDefs = [["overview", "Overview"], ["breaks", `Breaks`], ["source", "Source"], ["node", "Node"], ["output", "Output"]];
    tabDefs.push(["compiles", "Compiles"]);
    if (hasAdvisor(r)) tabDefs.push(["advisor", "Advisor"]);
    const badge = breakBadge(this.index), nBreaks = badge.n;
    const tabBar = h("div", { class: "nsv-tabs", role: "tablist" }, tabDefs.map(([id, label]) => {
      const b = h("button", { class: "nsv-tab", role: "tab", type: "button", "data-tab": id, "aria-selected": "false", onclick: () => this.store.set({ tab: id }) },
        label, id === "breaks" ? h("span", { class: "nsv-badge", title: badge.title }, String(nBreaks)) : null);
      this.tabs[id] = b;
      return b;
    }));
    const side = h("aside", { class: "nsv-side" }, tabBar);
    for (const [id] of tabDefs) {
      const body = h("div", { class: "nsv-tab-body", role: "tabpanel", "data-tab": id, hidden: true });
      this.tabBodies[id] = body;
      side.appendChild(body);
    }
    const findings = renderFindings(r);
    if (findings) this.tabBodies.overview.appendChild(findings);
    this.tabBodies.overview.appendChild(renderSummary(r, this.index));
    this.breaksHost = h("div", { class: "nsv-breaks" });
    this.tabBodies.breaks.appendChild(this.breaksHost);
    renderBreaks(this.breaksHost, r, this.index, {
      onSelect: (run, i) => this.store.set({ selectedBreak: { run, index: i } }),
      onGraph: (run, id) => this.showGraphs([{ run, graph: id }], "single"),
      graphsOfCompiles: (run, ids) => this.graphsOfCompiles(run, ids),
      onFrame: (loc) => this.revealSource(loc),
      onCompile: (run, id) => this.openCompile(run, id),
    });
    this.compiles = new CompilesPanel(r, this.index, {
      onGraph: (run, id) => this.showGraphs([{ run, graph: id }], "single"),
      onBreak: (run, i) => this.store.set({ tab: "breaks", selectedBreak: { run, index: i } }),
      onFrame: (loc) => this.revealSource(loc),
    });
    this.tabBodies.compiles.appendChild(this.compiles.el);
    this.source = new SourcePane(r, this.index);
    this.tabBodies.source.appendChild(this.source.el);
    this.tabBodies.node.appendChild(h("div", { class: "nsv-muted nsv-pad" }, "Click a node in the graph to see its data here."));
    this.tabBodies.output.appendChild(renderOutput(r));
    if (this.tabBodies.advisor) this.tabBodies.advisor.appendChild(renderAdvisor(r));
    // graph area
    this.searchInput = h("input", { class: "nsv-search", type: "search", placeholder: "Search nodes: name, op, target, module  ( / )", "aria-label": "search nodes",
      oninput: () => this.runSearch(), onkeydown: (ev) => { if (ev.key === "Enter") { this.stepHit(ev.shiftKey ? -1 : 1); ev.preventDefault(); } if (ev.key === "Escape") { this.searchInput.value = ""; this.runSearch(); } } });
    this.searchCount = h("span", { class: "nsv-search-count", "aria-live": "polite" });
    this.crossSearch = new CrossSearch(this);
    this.modeBtns = {};
    const modeBar = h("div", { class: "nsv-seg", role: "group", "aria-label": "view mode" }, [["single", "Single"], ["side_by_side", "Side by side"], ["merged", "Merged"]].map(([m, label]) => {
      const b = h("button", { class: "nsv-seg-btn", type: "button", "data-mode": m, title: m === "merged" ? "nonstrict run's ops coloured by the baseline graph that computed them" : null, onclick: () => this.setMode(m) }, label);
      this.modeBtns[m] = b;
      return b;
    }));
    const tool = (label, title, fn) => h("button", { class: "nsv-btn nsv-btn-icon", type: "button", title, "aria-label": title, onclick: fn }, label);
    const toolbar = h("div", { class: "nsv-toolbar" },
      modeBar,
      h("div", { class: "nsv-search-wrap" }, this.searchInput, this.searchCount,
        tool("↑", "previous match (Shift+Enter)", () => this.stepHit(-1)), tool("↓", "next match (Enter)", () => this.stepHit(1))),
      h("div", { class: "nsv-tools" },
        tool("⊟", "collapse all groups", () => this.eachPane((p) => p.setExpansion("collapse"))),
        tool("◫", "expand non-strict regions", () => this.eachPane((p) => p.setExpansion("regions"))),
        tool("⊞", "expand all groups", () => this.eachPane((p) => p.setExpansion("all"))),
        tool("−", "zoom out (-)", () => this.eachPane((p) => p.gc.zoomAt(0.8, p.gc.W / 2, p.gc.H / 2))),
        tool("+", "zoom in (+)", () => this.eachPane((p) => p.gc.zoomAt(1.25, p.gc.W / 2, p.gc.H / 2))),
        tool("⤢", "fit to view (0)", () => (this.mode === "side_by_side" ? fitDiff(this) : this.eachPane((p) => p.gc.fit()))),
        minimapToggle(this),
        tool("⊡", "full screen (Esc leaves)", () => this.toggleFullscreen()),
        tool("?", "keyboard and mouse help (?)", () => this.toggleHelp()),
        linkToggle(this),
        h("button", { class: "nsv-btn", type: "button", title: "export the current graph view as SVG", onclick: () => this.exportSvg() }, "SVG"),
        h("button", { class: "nsv-btn", type: "button", title: "export the current graph view as PNG", onclick: () => this.exportPng() }, "PNG")));
    this.paneHost = h("div", { class: "nsv-panes" });
    this.legend = h("div", { class: "nsv-legend" });
    const main = h("main", { class: "nsv-main" }, toolbar, this.paneHost, this.legend);
    this.root.appendChild(header);
    this.root.appendChild(sideResizable(h("div", { class: "nsv-body" }, side, main), side, this.store));
    this.root.appendChild(this.toast);
    this.keyHandler = (ev) => {
      const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement && document.activeElement.tagName);
      if (ev.key === "Escape" && this.help) { this.toggleHelp(); ev.preventDefault(); return; }
      if (ev.key === "?" && !typing && (this.el.contains(document.activeElement) || this.host.standalone)) { this.toggleHelp(); ev.preventDefault(); return; }
      if (ev.key === "/" && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement && document.activeElement.tagName)) {
        if (this.el.contains(document.activeElement) || this.host.standalone) { this.searchInput.focus(); ev.preventDefault(); }
      }
    };
    this.el.addEventListener("keydown", this.keyHandler);
    if (this.host.standalone) document.addEventListener("keydown", this.keyHandler);
    this.cleanups.push(() => document.removeEventListener("keydown", this.keyHandler));
    // initial state
    const v = this.store.get("view") || {};
    const sb = this.store.get("selectedBreak") || {};
    this.store.set({ tab: nBreaks ? "breaks" : "overview" }, "init");
    this.onStore(new Set(["tab"]), "init");
    if (this.steps) this.steps.panels = performance.now();
    const start = v.run && v.graph && this.index.graph(v.run, v.graph) ? v : this.index.defaultView();
    const mode = v.mode || "single";
    await this.showGraphs(this.panesFor(start.run, start.graph, mode), mode);
    if (sb.run != null) this.onStore(new Set(["selectedBreak"]), "model");
    const sn = this.store.get("selectedNode") || {};
    if (sn.node) this.onStore(new Set(["selectedNode"]), "model");
  }

  /** Show another rank of an offline diff: rebuild the view from that rank's runs. */
  async pickRank(rank) {
    if (!this.fullReport) return;
    this.report = reportForRank(this.fullReport, rank);
    this.index = new ReportIndex(this.report);
    attachStacks(this.index);
    this.panes.forEach((p) => p.destroy());
    this.panes = [];
    this.cache.clear();
    if (this.keyHandler) {
      this.el.removeEventListener("keydown", this.keyHandler);
      document.removeEventListener("keydown", this.keyHandler);
    }
    this.store.set({ selectedNode: {}, selectedBreak: {}, view: {} }, "init");
    this.el.dataset.nstvizRank = String(rank);
    await this.build();
  }

  /** The panes of a mode for (run, graph); `exact`: that graph itself, never its run's stacked fragments. */
  panesFor(run, graph, mode, exact = false) {
    if (mode === "merged") {
      const ns = this.index.graph("nonstrict", graph) ? graph : this.index.defaultView().graph;
      return [{ run: this.index.run("nonstrict") ? "nonstrict" : run, graph: this.index.run("nonstrict") ? ns : graph }];
    }
    if (mode !== "side_by_side") return [{ run, graph }];
    const other = run === "baseline" ? (this.index.run("nonstrict") ? "nonstrict" : "baseline") : "baseline";
    const og = this.index.counterpart(run, realGraph(this.index, run, graph), other) || graph;
    // the baseline as written: all its fragments stacked, against the one nonstrict graph
    const stacked = (r, g) => (exact && r === run ? g : sideGraph(this.index, r, g));
    const left = run === "baseline" ? { run, graph: stacked(run, graph) } : { run: other, graph: stacked(other, og) };
    const right = run === "baseline" ? { run: other, graph: og } : { run, graph };
    return [left, right];
  }

  /** Show one or two panes; resolves after their first paint. */
  async showGraphs(specs, mode) {
    this.mode = mode;
    for (const [m, b] of Object.entries(this.modeBtns)) b.setAttribute("aria-pressed", m === mode ? "true" : "false");
    this.paneHost.dataset.count = String(specs.length);
    while (this.panes.length > specs.length) this.panes.pop().destroy();
    while (this.panes.length < specs.length) {
      const p = new GraphPane(this, this.panes.length ? "right" : "left");
      this.panes.push(p);
      this.paneHost.appendChild(p.el);
    }
    this.el.dataset.nstvizReady = "0";
    const token = (this._showToken = (this._showToken || 0) + 1);
    const t0 = performance.now();
    await Promise.all(specs.map((s, k) => this.panes[k].show(s.run, s.graph)));
    if (token !== this._showToken) return;
    this.firstPaintMs = performance.now() - t0;
    this.syncView();
    afterShow(this); // Side by side: panes fitted, one-side-only ops marked
    this.renderLegend();
    markBreak(this);
    if (this.searchInput.value) this.runSearch();
    this.el.dataset.nstvizReady = "1";
    if (this.steps && !this.steps.ready) this.steps.ready = performance.now();
  }

  setPaneGraph(side, run, graph) {
    const specs = this.panes.map((p) => ({ run: p.run, graph: p.graphId }));
    specs[side === "left" ? 0 : 1] = { run, graph };
    return this.showGraphs(specs, this.mode === "merged" && run !== "nonstrict" ? "single" : this.mode);
  }

  setMode(mode) {
    const first = this.panes[0];
    const cur = first ? { run: first.run, graph: first.graphId } : this.index.defaultView();
    const ref = mode === "side_by_side" || this.panes.length < 2 ? cur : { run: this.panes[1].run, graph: this.panes[1].graphId };
    return this.showGraphs(this.panesFor(ref.run, ref.graph, mode), mode);
  }

  syncView() {
    const p = this.panes[this.panes.length - 1];
    if (p) this.store.set({ view: { run: p.run, graph: p.graphId, mode: this.mode } });
  }

  colorMode() {
    return this.mode === "merged" ? "baseline" : "kind";
  }

  eachPane(fn) {
    this.panes.forEach((p) => { if (p.entry) fn(p); });
  }

  /**
   * Cached graph model + group tree for (run, graph id); yields between the steps, and a big
   * graph's steps run in slices (no long main-thread task).
   */
  async graphEntry(run, graphId, yieldFn) {
    const key = `${run}\u0000${graphId}`;
    let e = this.cache.get(key);
    if (e) return e;
    const graph = this.index.graph(run, graphId);
    const big = yieldFn && graph.nodes.length > 5000;
    if (big) await yieldFn(); // not in the task that built the panels
    const t0 = performance.now();
    const gm = big ? await buildGraphModelSliced(graph, yieldFn) : buildGraphModel(graph);
    if (graph.level === "aten_backward") {
      const fwd = this.index.graphs(run).find((g) => g.level === "aten_forward" && g.frame_id === graph.frame_id
        && g.compile_id === graph.compile_id && (g.attempt || 0) === (graph.attempt || 0));
      if (fwd) inferModulesFromForward(gm, fwd);
    }
    for (let i = 0; i < gm.n; i++) {
      // the opaque node reads better as the call it stands for
      if (gm.kind[i] === KIND_NONSTRICT && gm.region[i] >= 0) gm.labels[i] = `nonstrict: ${this.regionFunction(run, gm.regionIds[gm.region[i]])}`;
    }
    const t1 = performance.now();
    if (yieldFn) await yieldFn();
    const tree = big ? await buildGroupTreeSliced(gm, { fold: false }, yieldFn) : buildGroupTree(gm, { fold: false });
    fixStackTree(gm, tree); // stacked fragments: before folding, which reads the final groups
    if (big) await yieldFn(); // folding identical blocks: a task of its own
    if (big) await foldTreeSliced(gm, tree, yieldFn);
    else foldTree(gm, tree);
    for (const g of tree.groups) {
      if (!g.dead && g.kind === "region") g.label = `${this.regionFunction(run, gm.regionIds[g.region])} · ${gm.regionIds[g.region]}`;
    }
    e = { gm, tree, buildMs: t1 - t0, treeMs: performance.now() - t1 };
    this.cache.set(key, e);
    return e;
  }

  /** The Report's region `id` of a run (a Map per run's region list: a 50k-node graph has ~1,000 regions). */
  regionInfo(run, id) {
    const list = (this.index.run(run) || {}).regions || [];
    if (!this._regionMaps) this._regionMaps = new WeakMap();
    let byId = this._regionMaps.get(list);
    if (!byId) {
      byId = new Map();
      for (const r of list) if (!byId.has(r.id)) byId.set(r.id, r); // the first, as find() gave
      this._regionMaps.set(list, byId);
    }
    return byId.get(id) || { id };
  }

  regionFunction(run, id) {
    return this.regionInfo(run, id).function || "?";
  }

  onPaneChanged() {
    this.renderLegend();
  }

  renderLegend() {
    renderLegend(this);
    renderDiffLegend(this);
  }

  // -- selection -----------------------------------------------------------------------

  selectNode(run, graphId, i, pane, focus = false) {
    const entry = this.cache.get(`${run}\u0000${graphId}`);
    if (!entry) return;
    if (selectBand(this, run, graphId, i)) return; // a break band of a stacked pane: that break
    const nd = entry.gm.nodes[i];
    // a node of stacked fragments is named by its own graph; `in` says which view shows it
    this.store.set({ selectedNode: nd.orig ? { run, graph: nd.orig.graph, node: nd.orig.name, in: graphId } : { run, graph: graphId, node: nd.name } });
    if (pane) pane.highlightNode(i, focus);
  }

  clearSelection() {
    this.store.set({ selectedNode: {} });
  }

  async onStore(changed, origin) {
    if (!this.report) return;
    if (changed.has("tab")) {
      const t = this.store.get("tab");
      for (const [id, b] of Object.entries(this.tabs)) {
        b.setAttribute("aria-selected", id === t ? "true" : "false");
        this.tabBodies[id].hidden = id !== t;
      }
    }
    if (changed.has("selectedNode")) await this.applySelectedNode(origin);
    if (changed.has("selectedBreak")) this.applySelectedBreak(origin);
    if (changed.has("view") && origin === "model") {
      const v = this.store.get("view") || {};
      // a view set from Python shows the graph it names (not its run's stacked fragments)
      if (v.run && v.graph && this.index.graph(v.run, v.graph)) await this.showGraphs(this.panesFor(v.run, v.graph, v.mode || "single", true), v.mode || "single");
    }
  }

  async applySelectedNode(origin) {
    const sn = this.store.get("selectedNode") || {};
    clear(this.tabBodies.node);
    if (!sn.node) {
      this.panes.forEach((p) => { if (p.entry) { p.highlightNode(-1); p.setLinked([]); } });
      this.tabBodies.node.appendChild(h("div", { class: "nsv-muted nsv-pad" }, "Click a node in the graph to see its data here."));
      this.source.setNodeLines([]);
      return;
    }
    const shown = sn.in || sn.graph; // the stacked view holding the node, or its graph
    let pane = this.panes.find((p) => p.run === sn.run && p.graphId === shown);
    if (!pane && origin === "model") {
      if (!this.index.graph(sn.run, shown)) return;
      await this.showGraphs([{ run: sn.run, graph: shown }], "single");
      pane = this.panes[0];
    }
    const entry = this.cache.get(`${sn.run}\u0000${shown}`);
    if (!entry) return;
    const i = entry.gm.byName.get(sn.in ? `${sn.graph}${SEP}${sn.node}` : sn.node);
    if (i === undefined) return;
    if (pane && (origin === "model" || pane.selected !== i)) pane.highlightNode(i, true);
    if (pane) pane.setLinked([]);
    for (const p of this.panes) {
      if (p === pane || !p.entry) continue;
      p.highlightNode(-1);
      // the same op from the same source line in the other graph (baseline <-> nonstrict)
      const same = correspondingNodes(entry.gm, i, p.entry.gm, (g, j) => nodeKeys(this, g === entry.gm ? sn.run : p.run, g, j));
      p.setLinked(same);
      alignOn(this, pane, i, p, same); // linked panes: the same op at the same height
    }
    this.tabBodies.node.appendChild(renderDetails({
      gm: entry.gm, i, run: sn.run, graphId: sn.graph, index: this.index,
      onNode: (j) => this.selectNode(sn.run, shown, j, pane, true),
      onFrame: (f) => this.revealSource(f),
      regionInfo: (id) => this.regionInfo(sn.run, id),
      onCompile: (run, id) => this.openCompile(run, id),
    }));
    const stack = this.index.stack(entry.gm.nodes[i].stack);
    this.source.setNodeLines(stack);
    const inner = stack[stack.length - 1];
    if (inner) this.source.reveal(inner.file, inner.line);
    if (this.store.get("tab") !== "node") this.store.set({ tab: "node" });
  }

  applySelectedBreak(origin) {
    const sb = this.store.get("selectedBreak") || {};
    markSelectedBreak(this.breaksHost, sb.run != null ? sb : null);
    if (sb.run == null) { markBreak(this); return; }
    const b = ((this.index.run(sb.run) || {}).breaks || [])[sb.index];
    if (!b) return;
    if (origin === "model" && this.store.get("tab") !== "breaks") this.store.set({ tab: "breaks" });
    const loc = b.location || {};
    this.source.reveal(loc.file, loc.line);
    if (showBreakInStack(this, sb)) return; // its band is on screen: the diff stays
    let ids = [b.graph_before, b.graph_after].filter((g) => g && this.index.graph(sb.run, g));
    if (!ids.length) ids = this.graphsOfCompiles(sb.run, b.compile_ids || []).slice(0, 2);
    const specs = ids.map((g) => ({ run: sb.run, graph: this.preferAten(sb.run, g) }));
    if (specs.length) this.showGraphs(specs, specs.length === 2 ? "side_by_side" : "single");
    else markBreak(this);
  }

  /** Graph ids compiled by the given compile ids (an id without an attempt: any attempt), in that order. */
  graphsOfCompiles(run, compileIds) {
    const compiles = (this.index.run(run) || {}).compiles || [];
    const out = [];
    for (const cid of compileIds) {
      const c = compiles.find((x) => namesFrameCompile(cid, x) && (!cid.attempt || (x.attempt || 0) === cid.attempt));
      const gid = c && (c.graph_ids || []).find((g) => this.index.graph(run, g));
      if (gid && !out.includes(gid)) out.push(gid);
    }
    return out;
  }

  /** Breaks name Dynamo graphs; show the same graph at the level the user is looking at. */
  preferAten(run, graphId) {
    const cur = this.panes[0] && this.index.graph(this.panes[0].run, this.panes[0].graphId);
    const g = this.index.graph(run, graphId);
    if (!cur || !g || cur.level === g.level) return graphId;
    const alt = this.index.graphs(run).find((x) => x.frame_id === g.frame_id && x.compile_id === g.compile_id && x.level === cur.level);
    return alt ? alt.id : graphId;
  }

  /** Open compile `cid` (a compile id) of `run` in the Compiles tab. */
  openCompile(run, cid) {
    if (this.compiles && this.compiles.showDetail(run, cid)) this.store.set({ tab: "compiles" });
    else this.showToast(`No compile ${compileIdText(cid)} recorded in ${run}`);
  }

  revealSource(loc) {
    if (!loc) return;
    this.store.set({ tab: "source" });
    if (!this.source.reveal(loc.file, loc.line)) this.showToast(`No source text for ${loc.file}`);
  }

  // -- search --------------------------------------------------------------------------

  runSearch() {
    return this.crossSearch.run(this.searchInput.value); // both panes, every graph of their runs (ui/crosssearch.js)
  }

  stepHit(dir) {
    return this.crossSearch.step(dir);
  }

  toggleHelp() {
    if (this.help) { this.help.remove(); this.help = null; return; }
    const rows = [
      ["drag; wheel, Shift+wheel (in a notebook: after a click into the graph)", "pan"], ["Ctrl/⌘ + wheel, pinch, + / −", "zoom at the cursor"], ["0 / ⤢", "fit the graph"],
      ["click a node", "select it: details, source lines, the same op in the other pane"], ["click a group", "expand or collapse it"],
      ["double-click", "zoom in there"], ["/", "search (name, op, target, module; prefixes op: target: module: name: region:)"],
      ["Enter / Shift+Enter", "next / previous match"], ["Shift + ↑ / ↓", "walk to the selected node's first input / user"],
      ["arrows", "pan"], ["Esc", "clear the selection; close this help"], ["⊟ ◫ ⊞", "collapse all, expand non-strict regions, expand all"],
    ];
    this.help = h("div", { class: "nsv-help", role: "dialog", "aria-label": "help" },
      h("div", { class: "nsv-help-head" }, h("strong", null, "Graph view"), h("button", { class: "nsv-btn nsv-btn-small", type: "button", onclick: () => this.toggleHelp() }, "close")),
      h("dl", { class: "nsv-kv nsv-kv-wide" }, rows.map(([k, v]) => [h("dt", { class: "nsv-mono" }, k), h("dd", null, v)])),
      h("div", { class: "nsv-muted nsv-small" }, "Orange marks nodes inlined from functions traced with torch._dynamo.nonstrict_trace; a dashed node is the opaque call Dynamo keeps for one."));
    this.root.appendChild(this.help);
    placeBelow(this.help, this.searchInput.closest(".nsv-toolbar"), this.el);
  }

  toggleFullscreen() {
    if (document.fullscreenElement) document.exitFullscreen();
    else if (this.el.requestFullscreen) this.el.requestFullscreen().catch(() => this.showToast("Full screen is not available here"));
  }

  // -- exports -------------------------------------------------------------------------

  exportSvg() {
    const p = this.panes[0];
    if (!p || !p.entry) return;
    const text = sceneToSvg(p.gc.scene, p.gc.theme);
    download(new Blob([text], { type: "image/svg+xml" }), `${fileStem(p)}.svg`);
  }

  async exportPng() {
    const p = this.panes[0];
    if (!p || !p.entry) return;
    download(await canvasToPng(p.gc.canvas), `${fileStem(p)}.png`);
  }

  exportHtml() {
    if (this.model.get("standalone")) {
      const page = this.host.pristineHtml ? this.host.pristineHtml() : "<!DOCTYPE html>\n" + document.documentElement.outerHTML;
      download(new Blob([page], { type: "text/html" }), "nstviz-report.html");
      return;
    }
    this.exportBtn.disabled = true;
    this.showToast("Writing the HTML file…");
    this.model.send({ type: "export_html" });
    setTimeout(() => { this.exportBtn.disabled = false; }, 3000);
  }

  onCustom(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "export_done") { this.exportBtn.disabled = false; this.showToast(`Saved ${msg.path}`); }
    if (msg.type === "export_failed") { this.exportBtn.disabled = false; this.showToast(`Export failed: ${msg.message}`, true); }
  }

  showToast(text, bad = false) {
    if (!this.toast) return;
    this.toast.textContent = text;
    this.toast.classList.toggle("nsv-toast-bad", bad);
    this.toast.hidden = false;
    clearTimeout(this._toastT);
    this._toastT = setTimeout(() => { this.toast.hidden = true; }, 4000);
  }

  debugHook() {
    return makeDebugHook(this);
  }
}

function fileStem(p) {
  return `nstviz-${p.run}-${String(p.graphId).replace(/[^\w.-]+/g, "_")}`;
}
