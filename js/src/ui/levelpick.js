// ui/levelpick.js — which graph the level picker opens: the same compile at the other level.
// Owns: the rule "switching level keeps the compile id (frame, compile, attempt) where that
//   graph exists; else the nearest compile of the same frame; else the run's first graph
//   at that level".
// Must not: touch the DOM or the panes; the pane calls it and shows what it returns.

/**
 * @param {import("../contract/decode.js").ReportIndex} index
 * @param {string} run
 * @param {string} graphId the graph shown now
 * @param {string} level the level picked
 * @returns {string|null} the graph id to show
 */
export function graphAtLevel(index, run, graphId, level) {
  const all = index.graphs(run).filter((x) => x.level === level);
  if (!all.length) return null;
  const cur = index.graph(run, graphId);
  if (!cur) return all[0].id;
  const att = (g) => g.attempt || 0;
  const rank = (g) => (g.frame_id !== cur.frame_id ? 3 : g.compile_id !== cur.compile_id ? 2 : att(g) !== att(cur) ? 1 : 0);
  let best = all[0];
  for (const g of all) if (rank(g) < rank(best)) best = g;
  return best.id;
}
