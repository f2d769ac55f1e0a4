// ui/format.js — short text forms shared by the panels (file paths).
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
 * The two counts of a break: `caused` (graph breaks Dynamo counted for it) and `reached` (trace
 * events). Reports made before nstviz measured `caused` estimate it as the distinct frames of its
 * compile ids (`exact: false`), as nstviz/analysis/break_counts.py does.
 */
export function breakCounts(b) {
  const reached = b.count ?? 1;
  if (b.caused != null) return { caused: b.caused, reached, exact: true };
  if (b.fatal) return { caused: 0, reached, exact: true }; // a fullgraph error: Dynamo counts none
  const frames = new Set((b.compile_ids || []).map((c) => (/^\[?(\d+)\/\d+/.exec(String(c)) || [])[1]).filter(Boolean));
  const est = frames.size ? frames.size : (reached ? 1 : 0);
  return { caused: reached ? Math.min(est, reached) : est, reached, exact: false };
}

/**
 * Breaks ranked as nstviz ranks them (nstviz/analysis/break_counts.py rank_breaks): most graph
 * breaks caused, then most reached, fatal first, then first seen. Returns [{b, i}] with i the
 * break's index in the run (selections keep using it).
 */
export function rankBreaks(breaks) {
  return (breaks || []).map((b, i) => ({ b, i, c: breakCounts(b) }))
    .sort((x, y) => (y.c.caused - x.c.caused) || (y.c.reached - x.c.reached) || ((y.b.fatal ? 1 : 0) - (x.b.fatal ? 1 : 0)) || (x.i - y.i))
    .map(({ b, i }) => ({ b, i }));
}

/** "TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0": the frames a break split. */
export function splitsText(b) {
  const byFn = new Map();
  for (const s of b.splits || []) {
    const fn = s.function || "?";
    if (!byFn.has(fn)) byFn.set(fn, []);
    // a compile split more than once is written once with its count ("4/0×3")
    byFn.get(fn).push((s.count ?? 1) > 1 ? `${s.compile_id}×${s.count}` : s.compile_id);
  }
  return [...byFn].map(([fn, ids]) => `${fn} ${ids.join(" ")}`).join(", ");
}

/** "caused 4 graph breaks" ("stopped the compile" for a fullgraph error, "~" when estimated). */
export function causedText(b) {
  const c = breakCounts(b);
  if (b.fatal && !c.caused) return "stopped the compile";
  return `caused ${c.exact ? "" : "~"}${c.caused} graph break${c.caused === 1 ? "" : "s"}`;
}
