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
