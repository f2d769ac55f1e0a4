// contract/compileid.js — a compile's id as the Report holds it: an object
//   {frame_id, frame_compile_id, attempt?, compiled_autograd_id?} (Python's CompileId, tlparse's struct).
// Owns: the one text form of an id (tlparse's "1/0", "1/0_1" after a restart, "!3/0/1" under
//   compiled autograd), the id of a Compile or Graph record, and matching an id with a record.
// Must not: parse text back into an id (the Report writes ids as objects), touch the DOM.

/** tlparse's text of a compile id: "1/0", "1/0_1" (attempt 1), "!3/0/1" (compiled autograd 3). */
export function compileIdText(cid) {
  if (!cid || typeof cid !== "object") return "";
  let text = cid.frame_id != null ? `${cid.frame_id}/${cid.frame_compile_id}` : "";
  if (cid.compiled_autograd_id != null) text = `!${cid.compiled_autograd_id}${text ? "/" + text : ""}`;
  return text + (cid.attempt ? `_${cid.attempt}` : "");
}

/** The compile id of a Compile or Graph record (they hold frame_id, compile_id, attempt as numbers). */
export function compileIdOf(rec) {
  return { frame_id: rec.frame_id, frame_compile_id: rec.compile_id, attempt: rec.attempt || 0 };
}

/** Whether id `cid` names the frame compile of record `rec` (a Compile or Graph), whatever the attempt. */
export function namesFrameCompile(cid, rec) {
  return !!cid && !!rec && cid.frame_id === rec.frame_id && cid.frame_compile_id === rec.compile_id;
}
