// interaction/search.js — finding nodes by name, op, target or module.
// Owns: the query language (space-separated terms, all must match; "op:", "target:",
//   "module:", "name:", "region:" prefixes narrow a term to one field) and ranking.
// Must not: touch the DOM or the camera; callers decide how to reveal and highlight hits.

import { searchText } from "../contract/graphmodel.js";

const FIELDS = { name: 0, op: 1, target: 2, module: 3, type: 4 };

/**
 * @param {ReturnType<import("../contract/graphmodel.js").buildGraphModel>} gm
 * @param {string} query
 * @param {number} [limit]
 * @returns {number[]} node indices, exact name matches first, then graph order
 */
export function searchNodes(gm, query, limit = 5000) {
  const terms = String(query || "").toLowerCase().trim().split(/\s+/).filter(Boolean);
  if (!terms.length) return [];
  const parsed = terms.map((t) => {
    const m = /^(name|op|target|module|type|region):(.*)$/.exec(t);
    return m ? { field: m[1], text: m[2] } : { field: null, text: t };
  });
  const out = [];
  const exact = [];
  const text = searchText(gm);
  for (let i = 0; i < gm.n; i++) {
    const s = text[i];
    let ok = true;
    for (const p of parsed) {
      if (p.field === "region") {
        const r = gm.region[i];
        if (r < 0 || !String(gm.regionIds[r]).toLowerCase().includes(p.text)) { ok = false; break; }
      } else if (p.field) {
        const part = s.split("\u0001")[FIELDS[p.field]] || "";
        if (!part.includes(p.text)) { ok = false; break; }
      } else if (!s.includes(p.text)) { ok = false; break; }
    }
    if (!ok) continue;
    if (parsed.length === 1 && gm.nodes[i].name.toLowerCase() === parsed[0].text) exact.push(i);
    else out.push(i);
    if (out.length + exact.length >= limit) break;
  }
  return exact.concat(out);
}
