// ui/wrap.js — long code-like tokens in text ("`torch._dynamo.graph_break()`", "return.config.n_embd")
//   given break opportunities after their dots, slashes and brackets, so a narrow pane wraps them
//   between names instead of cutting a name in two.
// Owns: that splitting, as text nodes and <wbr> elements (never markup from strings).
// Must not: change the text (textContent stays exactly the input).

import { h } from "./dom.js";

/** Children for h(): the text's pieces with a <wbr> after each ".", "/", "(" or "[" inside a token. */
export function breakable(text) {
  const parts = String(text).split(/(?<=[./([])(?=\S)/);
  const out = [];
  parts.forEach((p, k) => { if (k) out.push(h("wbr")); out.push(p); });
  return out;
}
