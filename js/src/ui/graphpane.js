// ui/graphpane.js — one graph panel: run/level/graph pickers, the canvas, tooltip, and the
//   per-graph interaction state (expanded groups, search hits, highlighted selection).
// Owns: building (and caching through the app) the graph model and group tree, computing
//   the view after expand/collapse, mapping clicks to node selection or group toggling,
//   revealing and focusing nodes, and the read-only debug description of what is drawn.
// Must not: change other panes, the source or details panes directly (it asks the app).

import { LEVEL_NAMES } from "../contract/decode.js";
import { KIND_NAMES, KIND_NONSTRICT, searchTextUntil, tensorText } from "../contract/graphmodel.js";
import { initialExpansion, revealNode, ROOT } from "../layout/groups.js";
import { computeView, computeViewAsync, groupLabel } from "../layout/view.js";
import { GraphCanvas } from "../render/canvas.js";
import { Minimap } from "../render/minimap.js";
import { attachPanZoom } from "../interaction/panzoom.js";
import { searchNodes } from "../interaction/search.js";
import { setCompileLink } from "./compiles.js";
import { clear, h } from "./dom.js";
import { where } from "./format.js";
import { graphOptionLabel } from "./pickerlabel.js";
import { graphAtLevel } from "./levelpick.js";
import { wheelHint } from "./wheelhint.js";
import { bandTip, follow, stackDebug } from "./diffview.js";
import { canStack, isStackId, stackId, widenBands } from "../contract/stack.js";
import { nextTask } from "../nexttask.js";

/** Above this many visible boxes, layout runs in slices (no long main-thread task). */
const BIG_VIEW = 6000;

export class GraphPane {
  constructor(app, side) {
    this.app = app;
    this.side = side;
    this.run = null;
    this.graphId = null;
    this.entry = null; // {gm, tree}
    this.expanded = null;
    this.view = null;
    this.hits = [];
    this.hitSet = new Set();
    this.hitGroups = new Set();
    this.hitPos = -1;
    this.selected = -1; // node index
    this.selectedGroup = -1;
    this.linked = new Set();
    this.stats = {};
    this.runSel = h("select", { class: "nsv-select", "aria-label": "run", onchange: () => this.pick(this.runSel.value, null) });
    this.levelSel = h("select", { class: "nsv-select", "aria-label": "level", onchange: () => this.pickLevel(this.levelSel.value) });
    this.graphSel = h("select", { class: "nsv-select nsv-graph-select", "aria-label": "graph", onchange: () => this.pick(this.run, this.graphSel.value) });
    this.info = h("span", { class: "nsv-pane-info" });
    this.compileBtn = h("button", { class: "nsv-linkish nsv-mono nsv-pane-compile", type: "button", onclick: () => this.app.openCompile(this.run, this.compileBtn.compileId) });
    this.canvasHost = h("div", { class: "nsv-canvas-host" });
    this.tip = h("div", { class: "nsv-tip", role: "tooltip", hidden: true });
    this.empty = h("div", { class: "nsv-empty", hidden: true });
    this.busy = h("div", { class: "nsv-busy", role: "status", hidden: true });
    this.el = h("div", { class: "nsv-pane", "data-side": side },
      h("div", { class: "nsv-pane-bar" }, this.runSel, this.levelSel, this.graphSel, this.compileBtn, this.info),
      h("div", { class: "nsv-pane-body" }, this.canvasHost, this.tip, this.empty, this.busy));
    this.gc = new GraphCanvas(this.canvasHost);
    this.gc.minimap = new Minimap(this.gc, this.el.querySelector(".nsv-pane-body"));
    this.gc.minimap.off = app.store.get("minimap") === false; // the user's toggle, kept in the store
    this.gc.onCamera = () => { this.tip.hidden = true; }; // a tooltip must not outlive what it points at
    this._detach = attachPanZoom(this.gc, {
      onClick: (idx) => this.onClick(idx),
      onDblClick: (idx) => this.onDblClick(idx),
      onHover: (idx, ev) => this.onHover(idx, ev),
      onKey: (ev) => this.onKey(ev),
      // the wheel rule (interaction/panzoom.js): free where nothing else scrolls (the standalone page that fits, full screen)
      wheelFree: () => !!document.fullscreenElement || (!!app.host.standalone && document.documentElement.scrollHeight <= innerHeight + 1),
      onWheelPassed: wheelHint(this.el.querySelector(".nsv-pane-body")),
      onCamera: (before) => follow(this.app, this, before), // linked panes (Side by side)
    });
  }

  destroy() {
    this._detach();
    this.gc.destroy();
    this.el.remove(); // a destroyed pane must not keep its place (and half the height) in the layout
  }

  fillPickers() {
    const idx = this.app.index;
    clear(this.runSel);
    for (const r of idx.runNames) this.runSel.appendChild(h("option", { value: r }, r));
    this.runSel.value = this.run;
    clear(this.levelSel);
    for (const l of idx.levels(this.run)) this.levelSel.appendChild(h("option", { value: l }, LEVEL_NAMES[l] || l));
    const g = idx.graph(this.run, this.graphId);
    if (g) this.levelSel.value = g.level;
    clear(this.graphSel);
    if (g && canStack(idx, this.run, g.level)) {
      const k = idx.graphs(this.run).filter((x) => x.level === g.level && x.nodes.length).length;
      this.graphSel.appendChild(h("option", { value: stackId(g.level) }, `all ${k} graphs, stacked with their breaks`));
    }
    for (const x of idx.graphs(this.run)) {
      if (g && x.level !== g.level) continue;
      this.graphSel.appendChild(h("option", { value: x.id }, graphOptionLabel(x)));
    }
    if (g) this.graphSel.value = g.id;
    this.graphSel.title = g ? graphOptionLabel(g) : "";
    this.compileBtn.hidden = !g || !!g.stacked; // stacked fragments: each fragment's header names its compile
    if (g && !g.stacked) setCompileLink(this.compileBtn, g);
  }

  pickLevel(level) {
    const id = graphAtLevel(this.app.index, this.run, this.graphId, level); // the same compile id where it exists
    // Side by side compares one level: both panes move to it
    if (id && this.app.mode === "side_by_side") { this.app.showGraphs(this.app.panesFor(this.run, id, "side_by_side"), "side_by_side"); return; }
    if (isStackId(this.graphId) && canStack(this.app.index, this.run, level)) { this.pick(this.run, stackId(level)); return; }
    if (id) this.pick(this.run, id);
  }

  /** User picked a run/graph in this pane's selectors. */
  pick(run, graphId) {
    if (!graphId) {
      const cur = this.app.index.graph(this.run, this.graphId);
      const gs = this.app.index.graphs(run);
      const same = cur && gs.find((x) => x.level === cur.level);
      graphId = same ? same.id : gs.length ? gs[0].id : null;
    }
    this.app.setPaneGraph(this.side, run, graphId);
  }

  /** Show a graph; resolves once the first paint is done. */
  async show(run, graphId) {
    const t0 = performance.now();
    this.run = run;
    this.graphId = graphId;
    this.fillPickers();
    const graph = this.app.index.graph(run, graphId);
    if (!graph || !graph.nodes.length) {
      this.entry = null;
      this.view = null;
      this.empty.hidden = false;
      this.empty.textContent = graph ? "This graph has no nodes." : "This run captured no graphs.";
      this.gc.canvas.hidden = true;
      this.info.textContent = "";
      this.stats = { firstPaintMs: performance.now() - t0, nodes: 0 };
      return;
    }
    this.empty.hidden = true;
    this.gc.canvas.hidden = false;
    const entry = await this.app.graphEntry(run, graphId, nextTask);
    if (this.run !== run || this.graphId !== graphId) return; // superseded
    this.entry = entry;
    this.view = null; // until relayout: input handlers ignore events meanwhile
    this.tip.hidden = true;
    this.expanded = initialExpansion(entry.tree);
    this.selected = -1;
    this.selectedGroup = -1;
    this.setHits([]);
    await nextTask();
    if (this.entry !== entry) return;
    const t1 = performance.now();
    const pending = this.relayout();
    if (pending) await pending;
    const t2 = performance.now();
    this.gc.home();
    this.gc.drawNow();
    const g = entry.gm.graph;
    this.info.textContent = `${entry.gm.n} nodes · ${g.op_count || 0} ops${g.truncated ? " · truncated" : ""}`;
    this.stats = { firstPaintMs: performance.now() - t0, nodes: entry.gm.n, boxes: this.view.boxes.length,
      modelMs: entry.buildMs, treeMs: entry.treeMs, layoutMs: t2 - t1, drawMs: performance.now() - t2 };
    // prepare search text while the user looks at the first paint, in idle time only
    const idle = window.requestIdleCallback || ((fn) => setTimeout(() => fn({ timeRemaining: () => 8 }), 50));
    const part = (deadline) => { if (!searchTextUntil(entry.gm, () => deadline.timeRemaining() < 1)) idle(part); };
    idle(part);
  }

  /** Boxes the current expansion shows (cheap: counts items of expanded groups). */
  visibleEstimate() {
    let c = 0;
    for (const g of this.expanded) { const grp = this.entry.tree.groups[g]; if (grp && !grp.dead) c += grp.items.length; }
    return c;
  }

  /**
   * Lay out the current expansion. Big ones (> BIG_VIEW boxes) are laid out in slices, off the
   * critical path of input handling; returns a promise then (else undefined).
   */
  relayout(anchorGroup) {
    if (this.visibleEstimate() > BIG_VIEW) return this.relayoutAsync(anchorGroup);
    const { gm, tree } = this.entry;
    const before = this.anchorPoint(anchorGroup);
    const t0 = performance.now();
    this.view = computeView(gm, tree, this.expanded);
    this.stats.lastLayoutMs = performance.now() - t0;
    this.afterLayout(anchorGroup, before);
    return undefined;
  }

  async relayoutAsync(anchorGroup) {
    const entry = this.entry;
    const token = (this._layoutToken = (this._layoutToken || 0) + 1);
    const before = this.anchorPoint(anchorGroup);
    this.busy.hidden = false;
    this.busy.textContent = `Laying out ${this.visibleEstimate().toLocaleString()} boxes…`;
    const t0 = performance.now();
    const view = await computeViewAsync(entry.gm, entry.tree, new Set(this.expanded), {}, 40,
      () => token !== this._layoutToken || this.entry !== entry);
    if (!view) return false;
    this.busy.hidden = true;
    this.view = view;
    this.stats.lastLayoutMs = performance.now() - t0;
    this.afterLayout(anchorGroup, before); // drawn on the next animation frame
    return true;
  }

  anchorPoint(anchorGroup) {
    if (anchorGroup == null || !this.view) return null;
    const bi = this.view.boxOf.get(this.entry.gm.n + anchorGroup);
    return bi !== undefined ? this.gc.worldToScreen(this.view.boxes[bi].x, this.view.boxes[bi].y) : null;
  }

  afterLayout(anchorGroup, before) {
    const { gm } = this.entry;
    widenBands(this.view, gm);
    this.pushScene();
    if (before) {
      const bi = this.view.boxOf.get(gm.n + anchorGroup);
      if (bi !== undefined) {
        const b = this.view.boxes[bi];
        const k = this.gc.cam.k;
        this.gc.setCamera(k, before[0] - b.x * k, before[1] - b.y * k);
      }
    }
  }

  pushScene() {
    const { gm, tree } = this.entry;
    this.tip.hidden = true;
    const v = this.view;
    let selectedBox = -1, selectedItem = -1;
    if (this.selected >= 0) {
      selectedItem = v.itemOf[this.selected];
      selectedBox = v.boxOf.get(selectedItem) ?? -1;
    } else if (this.selectedGroup >= 0) {
      selectedItem = gm.n + this.selectedGroup;
      selectedBox = v.boxOf.get(selectedItem) ?? -1;
    }
    // groups that hide search hits get the hit outline
    this.hitGroups = new Set();
    for (const i of this.hitSet) {
      const it = v.itemOf[i];
      if (it >= gm.n) this.hitGroups.add(it - gm.n);
    }
    const sel = this.selected >= 0 ? `; selected node ${gm.nodes[this.selected].name}` : "";
    this.gc.canvas.setAttribute("aria-label", `${this.run} graph ${this.graphId}: ${gm.n} nodes, ${v.boxes.length} boxes shown${sel}. Arrows pan, + and - zoom, 0 fits, Shift+Up/Down walk inputs/users, Escape clears.`);
    this.gc.setScene({
      gm, tree, view: v, expanded: this.expanded, colorMode: this.app.colorMode(this),
      hits: this.hitSet, hitGroups: this.hitGroups, selectedBox, selectedItem, linked: this.linked, onlyHere: this.onlyHere,
      showMinimap: v.boxes.length > 12 && (v.width > this.gc.W * 1.2 || v.height > this.gc.H * 1.2),
    });
  }

  async toggleGroup(gid) {
    const t0 = performance.now();
    if (gid === ROOT) return;
    if (this.expanded.has(gid)) {
      // collapsing also collapses everything inside
      const stack = [gid];
      while (stack.length) {
        const g = stack.pop();
        this.expanded.delete(g);
        for (const it of this.entry.tree.groups[g].items) if (it < 0) stack.push(-it - 1);
      }
    } else this.expanded.add(gid);
    const pending = this.relayout(gid);
    if (pending) await pending; // big: drawn on the next animation frame
    else this.gc.drawNow();
    this.stats.lastToggleMs = performance.now() - t0;
    this.app.onPaneChanged(this);
  }

  async setExpansion(mode) {
    const tree = this.entry && this.entry.tree;
    if (!tree) return;
    if (mode === "collapse") this.expanded = new Set([ROOT]);
    else if (mode === "initial") this.expanded = initialExpansion(tree);
    else if (mode === "regions") {
      for (const g of tree.groups) if (!g.dead && g.kind === "region") {
        let p = g.id;
        while (p >= 0) { this.expanded.add(p); p = tree.groups[p].parent; }
      }
    } else this.expanded = new Set(tree.groups.filter((g) => !g.dead).map((g) => g.id));
    const pending = this.relayout();
    if (pending && !(await pending)) return;
    if (mode === "regions") {
      const first = tree.groups.find((g) => !g.dead && g.kind === "region");
      const bi = first ? this.view.boxOf.get(this.entry.gm.n + first.id) : undefined;
      if (bi !== undefined) this.gc.focus(this.view.boxes[bi], 0.7);
      else this.gc.home();
    } else if (mode === "collapse" || mode === "initial") this.gc.home();
    else this.gc.fit();
    this.app.onPaneChanged(this);
  }

  onClick(idx) {
    if (idx < 0 || !this.view) return;
    const b = this.view.boxes[idx];
    const n = this.view.n;
    if (b.item < n) this.app.selectNode(this.run, this.graphId, b.item, this);
    else this.toggleGroup(b.item - n);
  }

  onDblClick(idx) {
    if (idx < 0 || !this.view) return;
    const b = this.view.boxes[idx];
    this.gc.focus(b, Math.max(1, this.gc.cam.k * 1.5));
  }

  onKey(ev) {
    if (ev.key === "Escape") { this.app.clearSelection(); return true; }
    // with a node selected: Shift+Up / Shift+Down walk to its first input / first user
    if (ev.shiftKey && (ev.key === "ArrowUp" || ev.key === "ArrowDown") && this.selected >= 0 && this.entry) {
      const gm = this.entry.gm, i = this.selected;
      const up = ev.key === "ArrowUp";
      const [start, list] = up ? [gm.inStart, gm.inIdx] : [gm.outStart, gm.outIdx];
      if (start[i + 1] > start[i]) this.app.selectNode(this.run, this.graphId, list[start[i]], this, true);
      ev.preventDefault();
      return true;
    }
    if (ev.key === "Enter" && !this.hits.length && this.selected < 0 && this.view) {
      // Enter on the canvas with nothing else to do: expand the group nearest the centre
      const idx = this.gc.hitTest(this.gc.W / 2, this.gc.H / 2);
      if (idx >= 0) this.onClick(idx);
      return true;
    }
    if (ev.key === "Enter" && this.hits.length) { this.app.stepHit(ev.shiftKey ? -1 : 1); return true; } // walks every graph's matches
    return false;
  }

  onHover(idx, ev) {
    if (idx < 0 || !ev || !this.view) { this.tip.hidden = true; return; }
    const b = this.view.boxes[idx];
    const { gm, tree } = this.entry;
    clear(this.tip);
    if (b.item < gm.n) {
      const i = b.item, nd = gm.nodes[i];
      const lines = [
        [nd.name, "nsv-tip-title"],
        [`${KIND_NAMES[gm.kind[i]]} · ${nd.op}${nd.target && nd.op !== "placeholder" ? " · " + nd.target : ""}`],
      ];
      if (nd.tensors && nd.tensors.length) lines.push([nd.tensors.map(tensorText).join(", "), "nsv-mono"]);
      if (nd.value) lines.push([`value: ${nd.value}`, "nsv-mono"]);
      if (nd.param) lines.push([`parameter: ${nd.param}`, "nsv-mono"]);
      if (nd.module) lines.push([`module: ${nd.module}${nd.module_type ? " (" + nd.module_type + ")" : ""}`]);
      else if (gm.module[i]) lines.push([`module: ${gm.module[i]} (via the forward node's seq_nr)`]);
      if (gm.kind[i] === KIND_NONSTRICT) lines.push([`opaque call of ${gm.region[i] >= 0 ? this.app.regionFunction(this.run, gm.regionIds[gm.region[i]]) : "a non-strict function"}: its body is traced at the ATen level`, "nsv-tip-region"]);
      else if (gm.region[i] >= 0) lines.push([`inlined from non-strict region ${gm.regionIds[gm.region[i]]} (${this.app.regionFunction(this.run, gm.regionIds[gm.region[i]])})`, "nsv-tip-region"]);
      if (nd.baseline_graph) lines.push([`baseline graph: ${nd.baseline_graph}`]);
      if (nd.band) lines.splice(0, lines.length, ...bandTip(nd.band));
      const f = this.app.index.frame(nd.stack);
      if (f) lines.push([`${where(f.file, f.line)} in ${f.function}${f.code ? "  —  " + f.code : ""}`, "nsv-mono"]);
      for (const [t, cls] of lines) this.tip.appendChild(h("div", { class: cls || null }, t));
    } else {
      const g = tree.groups[b.item - gm.n];
      this.tip.appendChild(h("div", { class: "nsv-tip-title" }, groupLabel(tree, g.id)));
      this.tip.appendChild(h("div", null, `${g.kind === "region" ? "non-strict region" : g.kind === "chunk" ? "consecutive nodes" : g.kind === "series" ? `${g.count} blocks with the same ops and edges, folded` : "module"}${g.moduleType ? " · " + g.moduleType : ""}`));
      this.tip.appendChild(h("div", null, `${g.leafCount} nodes${g.regionCount ? ` · ${g.regionCount} inlined from non-strict regions` : ""}`));
      this.tip.appendChild(h("div", { class: "nsv-muted" }, this.expanded.has(g.id) ? "click the header to collapse" : "click to expand"));
    }
    const r = this.canvasHost.getBoundingClientRect();
    let x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 14;
    this.tip.hidden = false;
    const tw = this.tip.offsetWidth, thh = this.tip.offsetHeight;
    if (x + tw > r.width) x = Math.max(4, ev.clientX - r.left - tw - 10);
    if (y + thh > r.height) y = Math.max(4, ev.clientY - r.top - thh - 10);
    this.tip.style.left = x + "px";
    this.tip.style.top = y + "px";
  }

  /** Reveal and centre the next region group among `regionIds` (cycles on each call). */
  revealNextRegion(regionIds) {
    if (!this.entry) return;
    const { gm, tree } = this.entry;
    const wanted = new Set(regionIds);
    const groups = tree.groups.filter((g) => !g.dead && g.kind === "region" && wanted.has(gm.regionIds[g.region]));
    if (!groups.length) return;
    this._regionCursor = ((this._regionCursor ?? -1) + 1) % groups.length;
    const g = groups[this._regionCursor];
    let changed = false;
    for (let p = g.id; p >= 0; p = tree.groups[p].parent) if (!this.expanded.has(p)) { this.expanded.add(p); changed = true; }
    if (changed) {
      const pending = this.relayout();
      if (pending) { pending.then((ok) => ok && this.revealNextRegion(regionIds)); this._regionCursor--; return; }
    }
    this.selected = -1;
    this.selectedGroup = g.id;
    this.pushScene();
    const bi = this.view.boxOf.get(gm.n + g.id);
    if (bi !== undefined) this.gc.focus(this.view.boxes[bi], 0.8);
    this.app.onPaneChanged(this);
  }

  /** Highlight node i as selected (reveal it, optionally centre on it). */
  highlightNode(i, focus) {
    if (!this.entry || !this.view) return;
    this.selected = i;
    this.selectedGroup = -1;
    if (i >= 0 && revealNode(this.entry.tree, this.expanded, i)) {
      const pending = this.relayout();
      if (pending) { pending.then((ok) => ok && this.highlightNode(i, focus)); return; }
    }
    this.pushScene();
    if (i >= 0 && focus) {
      const bi = this.view.boxOf.get(this.view.itemOf[i]);
      if (bi !== undefined) this.gc.focus(this.view.boxes[bi]);
    }
  }

  /** Outline nodes that correspond to the selection in the other pane (no camera move). */
  setLinked(list) {
    this.linked = new Set(list);
    if (this.entry && this.view) this.pushScene();
  }

  setHits(list) {
    this.hits = list;
    this.hitSet = new Set(list);
    this.hitPos = -1;
    if (this.entry && this.view) this.pushScene();
  }

  /** Run a search; returns the number of hits. */
  search(q) {
    if (!this.entry) return 0;
    const t0 = performance.now();
    const hits = searchNodes(this.entry.gm, q);
    this.setHits(hits);
    this.stats.lastSearchMs = performance.now() - t0;
    return hits.length;
  }

  nextHit(dir = 1) {
    if (!this.hits.length) return -1;
    this.hitPos = (this.hitPos + dir + this.hits.length) % this.hits.length;
    const i = this.hits[this.hitPos];
    this.app.selectNode(this.run, this.graphId, i, this, true);
    return i;
  }

  /** Read-only description of what is drawn (for tests and benchmarks). */
  debug() {
    if (!this.entry || !this.view) return { run: this.run, graph: this.graphId, nodes: [], groups: [] };
    const { gm, tree } = this.entry;
    const v = this.view;
    const nodes = [], groups = [];
    for (const b of v.boxes) {
      if (b.item < gm.n) {
        const i = b.item;
        nodes.push({ name: gm.nodes[i].name, kind: KIND_NAMES[gm.kind[i]], region: gm.region[i] >= 0 ? gm.regionIds[gm.region[i]] : null,
          highlighted: gm.region[i] >= 0 && gm.kind[i] !== KIND_NONSTRICT, hit: this.hitSet.has(i), linked: this.linked.has(i), onlyHere: !!(this.onlyHere && this.onlyHere.has(i)), x: b.x, y: b.y, w: b.w, h: b.h });
      } else {
        const g = tree.groups[b.item - gm.n];
        groups.push({ id: g.id, key: g.key, label: groupLabel(tree, g.id), kind: g.kind, expanded: this.expanded.has(g.id),
          nodes: g.leafCount, inlined: g.regionCount, x: b.x, y: b.y, w: b.w, h: b.h });
      }
    }
    return {
      run: this.run, graph: this.graphId, totalNodes: gm.n, nodes, groups, camera: { ...this.gc.cam },
      canvas: { w: this.gc.W, h: this.gc.H }, selected: this.selected >= 0 ? gm.nodes[this.selected].name : null,
      hits: this.hits.map((i) => gm.nodes[i].name), stats: { ...this.stats }, frameTimes: this.gc.frameTimes.slice(), stack: stackDebug(this),
    };
  }
}
