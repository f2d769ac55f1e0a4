// contract/names.js — short forms of names and labels that stay distinct when shortened.
// Owns: the readable label of a Dynamo input named after a module attribute
//   (l_self_modules_h_modules_0_modules_ln_1_parameters_weight_ -> self.h.0.ln_1.weight) and
//   cutting a label to a width in the middle, keeping the tail where such names differ.
// Must not: touch the DOM or the Report; the full name stays in the model (tooltip, search).

const DYNAMO_ATTR = /^[lL]_(self|fn|mod|model)_(modules|parameters|buffers)_/;

/** Readable label of a placeholder name: Dynamo's mangled attribute paths as dotted paths. */
export function inputLabel(name) {
  const s = String(name);
  if (!DYNAMO_ATTR.test(s)) return s;
  return s.slice(2).replace(/_(modules|parameters|buffers)_/g, ".").replace(/_$/, "");
}

/**
 * `text` cut to at most `max` characters with "…" in the middle: the head says what kind of
 * thing it is, the longer tail keeps what tells siblings apart (`…ln_1.weight` / `…ln_1.bias`).
 */
export function cutMiddle(text, max) {
  if (text.length <= max) return text;
  if (max <= 2) return text.slice(0, Math.max(1, max - 1)) + "…";
  const head = Math.ceil((max - 1) * 0.35);
  const tail = max - 1 - head;
  return text.slice(0, head) + "…" + text.slice(text.length - tail);
}
