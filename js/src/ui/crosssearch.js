// ui/crosssearch.js — search across both panes and every graph of the runs they show.
// Owns: the query's match list over the scope (each shown run, at the level its pane shows:
//   the shown graph first, then the run's other graphs at that level in Report order), the
//   cursor that Enter / Shift+Enter and the arrows walk (switching a pane's graph when the
//   next match is in another graph), and the count text ("n matches in m graphs", "k / n in
//   m graphs").
// Must not: parse the query (interaction/search.js does), draw, or build panes itself; it
//   asks the app for graph entries, graph switches and the selection.

import { searchNodes } from "../interaction/search.js";
import { nextTask } from "../nexttask.js";


export class CrossSearch {
  /** @param {import("./app.js").App} app */
  constructor(app) {
    this.app = app;
    this.query = "";
    this.scopeKey = "";
    this.hits = []; // [{run, graph, i}]
    this.graphs = 0;
    this.pos = -1;
    this.ready = false;
    this.token = 0;
    this.pending = Promise.resolve();
    this.chain = Promise.resolve();
  }

  /** Runs shown, one pane each (the first pane showing it), with the level that pane shows. */
  scope() {
    const idx = this.app.index, out = [];
    this.app.panes.forEach((p, k) => {
      const g = idx.graph(p.run, p.graphId);
      if (!g || out.some((s) => s.run === p.run)) return;
      // a stacked pane (Side by side's baseline) already holds every graph of its level
      const others = g.stacked ? [] : idx.graphs(p.run).filter((x) => x.level === g.level && x.id !== g.id).map((x) => x.id);
      out.push({ pane: k, run: p.run, level: g.level, graphs: [g.id, ...others] });
    });
    return out;
  }

  /**
   * Search `q`: the shown graphs at once (their hits are drawn now), then every graph of the
   * scope. A graph switch made by walking the matches keeps the list and the cursor.
   */
  run(q) {
    const scope = this.scope();
    const key = scope.map((s) => `${s.run}\u0000${s.level}`).join("\u0001");
    if (q && q === this.query && key === this.scopeKey) { this.apply(); return this.pending; }
    this.query = q;
    this.scopeKey = key;
    this.pos = -1;
    const token = ++this.token;
    const t0 = performance.now();
    let shown = 0;
    for (const p of this.app.panes) shown += q ? p.search(q) : (p.setHits([]), 0);
    this.app.lastSearchMs = performance.now() - t0;
    this.hits = [];
    this.graphs = 0;
    this.ready = false;
    this.setCount(q ? countText(shown, 1) : "");
    this.app.panes.forEach((p) => p.gc.invalidate());
    if (!q) return (this.pending = Promise.resolve());
    this.pending = this.collect(q, scope, token);
    return this.pending;
  }

  async collect(q, scope, token) {
    const hits = [];
    const graphs = new Set();
    for (const s of scope) {
      for (const gid of s.graphs) {
        const graph = this.app.index.graph(s.run, gid);
        if (!graph || !graph.nodes.length) continue;
        const entry = await this.app.graphEntry(s.run, gid, nextTask); // a big graph is built in tasks of its own
        if (token !== this.token) return;
        for (const i of searchNodes(entry.gm, q)) {
          hits.push({ run: s.run, graph: gid, i });
          // a stacked node counts in the graph it was copied from
          graphs.add(`${s.run}\u0000${entry.gm.nodes[i].orig?.graph ?? gid}`);
        }
      }
    }
    this.hits = hits;
    this.graphs = graphs.size;
    this.ready = true;
    this.setCount(countText(hits.length, graphs.size));
  }

  /** Draw the list's hits in the panes that show their graphs (after a graph switch). */
  apply() {
    if (!this.ready) return;
    for (const p of this.app.panes) {
      const mine = this.hits.filter((h) => h.run === p.run && h.graph === p.graphId).map((h) => h.i);
      if (mine.length || p.hits.length) p.setHits(mine);
    }
    this.showPos();
  }

  /** Walk to the next (dir 1) or previous (-1) match; steps queue behind one another. */
  step(dir) {
    this.chain = this.chain.then(() => this.walk(dir)).catch((e) => console.error(e));
    return this.chain;
  }

  async walk(dir) {
    await this.pending;
    const n = this.hits.length;
    if (!n) return;
    this.pos = this.pos < 0 ? (dir > 0 ? 0 : n - 1) : (this.pos + dir + n) % n;
    const h = this.hits[this.pos];
    const k = this.scope().find((s) => s.run === h.run)?.pane ?? 0;
    let pane = this.app.panes[k];
    if (!pane) return;
    if (pane.graphId !== h.graph) {
      await this.app.setPaneGraph(pane.side, h.run, h.graph);
      pane = this.app.panes.find((p) => p.run === h.run && p.graphId === h.graph);
      if (!pane) return;
    }
    this.app.selectNode(h.run, h.graph, h.i, pane, true);
    this.showPos();
  }

  showPos() {
    if (this.pos >= 0 && this.pos < this.hits.length) this.setCount(`${this.pos + 1} / ${this.hits.length}${this.graphs > 1 ? ` in ${this.graphs} graphs` : ""}`);
  }

  setCount(text) {
    this.app.searchCount.textContent = text;
  }
}

function countText(n, graphs) {
  return `${n} match${n === 1 ? "" : "es"}${graphs > 1 ? ` in ${graphs} graphs` : ""}`;
}
