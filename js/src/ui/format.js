// ui/format.js — short text forms shared by the panels (file paths).
// Owns: formatting only. Must not: touch the DOM.

/** The last two parts of a path ("project/model.py"), for compact display. */
export function shortPath(p) {
  const s = String(p || "");
  const parts = s.split(/[\\/]/);
  return parts.length > 2 ? parts.slice(-2).join("/") : s;
}
