// ui/format.js — short text forms shared by the panels (file paths), and reading the break facts
//   the Report holds (counts, their texts, the rank order): computed in Python, never here.
// Owns: formatting only. Must not: touch the DOM.

/** A notebook cell's label as IPython writes it in tracebacks ("Cell In[3]"). */
const CELL_LABEL = /^Cell In\[\d+\]$/;

/**
 * A location for people: "Cell In[3], line 4" for a notebook cell (IPython's wording; the
 * magic stores the label as the file), else "dir/file.py:4". Same rule as nstviz/_where.py.
 */
export function where(file, line) {
  const ln = line ?? "?";
  if (CELL_LABEL.test(String(file || ""))) return `${file}, line ${ln}`;
  return `${shortPath(file) || "?"}:${ln}`;
}

/** The last two parts of a path ("project/model.py"), for compact display. */
export function shortPath(p) {
  const s = String(p || "");
  const parts = s.split(/[\\/]/);
  return parts.length > 2 ? parts.slice(-2).join("/") : s;
}

/** What the two counts of a break mean (the tooltips of the break list). */
export const CAUSED_HELP = "Graph breaks this break caused: its share of Dynamo's own counter, "
  + "torch._dynamo.utils.counters[\"graph_break\"] (summed over a run's breaks it equals the counter's increase). "
  + "Listed: the frame compiles (tlparse ids) whose graph it split.";
export const REACHED_HELP = "Times Dynamo's tracing reached this break: its graph-break entries in tlparse "
  + "(dynamo_graph_break_reason), restarts and frames Dynamo abandoned included.";

/**
 * The counts of a break and their texts, as the Report holds them (Break.tally, computed once in
 * Python: nstviz/report/model.py). A Report without them (hand-made, or cut) shows no counts.
 */
export function tallyOf(b) {
  const t = b && typeof b.tally === "object" && b.tally !== null ? b.tally : {};
  return { caused_text: String(t.caused_text ?? ""), splits_text: String(t.splits_text ?? ""), reached: t.reached ?? b?.count ?? null };
}

/**
 * A run's breaks in the Report's rank order (Run.break_order, computed once in Python: most graph
 * breaks caused, then most reached, fatal first, then first seen). Returns [{b, i}] with i the
 * break's index in the run (selections keep using it). Without an order, the run's own order.
 */
export function inRankOrder(run) {
  const breaks = (run && run.breaks) || [];
  const given = run && run.break_order;
  const valid = Array.isArray(given) && given.length === breaks.length && new Set(given).size === breaks.length
    && given.every((i) => Number.isInteger(i) && i >= 0 && i < breaks.length);
  return (valid ? given : breaks.map((_, i) => i)).map((i) => ({ b: breaks[i], i }));
}
