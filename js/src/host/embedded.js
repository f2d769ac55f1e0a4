// host/embedded.js — the Report text held by the standalone page's data element.
// Owns: decoding the element's text: JSON as it is, or gzip+base64 (data-encoding="gzip+base64",
//   what nstviz/render/html.py writes) through the browser's own DecompressionStream.
// Must not: fetch anything (no data: URLs either: the page's CSP has connect-src 'none').

import { nextTask } from "../nexttask.js";

export const GZIP_BASE64 = "gzip+base64";

/** Bytes of base64 text (the browser's native decoder where it has one). */
export function base64Bytes(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/** Compressed Reports up to this size are inflated in one go (a 10k-node page's is about 190 KB). */
export const SLICED_FROM_BYTES = 400000;

/**
 * UTF-8 text of gzip bytes.
 *
 * From ``slicedFrom`` bytes on, the bytes go in ``sliceBytes`` at a time and, every ``sliceMs``
 * of work, the rest waits for a new task: Blink inflates on the page's thread, and a 50k-node
 * Report (13.6 MB of JSON) inflated in one go was one task of about 150 ms.
 */
export async function gunzipText(bytes, { sliceBytes = 65536, sliceMs = 30, slicedFrom = SLICED_FROM_BYTES } = {}) {
  if (bytes.length < slicedFrom) {
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  }
  const inflate = new DecompressionStream("gzip");
  const writer = inflate.writable.getWriter();
  const reader = inflate.readable.getReader();
  const fed = (async () => {
    for (let at = 0; at < bytes.length; at += sliceBytes) await writer.write(bytes.subarray(at, at + sliceBytes));
    await writer.close();
  })();
  fed.catch(() => {}); // a corrupted input rejects the reads below too: reported there
  const decoder = new TextDecoder("utf-8");
  const parts = [];
  let since = performance.now();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(decoder.decode(value, { stream: true }));
    if (performance.now() - since > sliceMs) {
      await nextTask();
      since = performance.now();
    }
  }
  await fed;
  parts.push(decoder.decode());
  return parts.join("");
}

/**
 * The Report JSON text of a data element, or an error message for the viewer to show.
 * @param {{textContent: string, getAttribute: (name: string) => string|null}|null} el
 * @returns {Promise<{text: string} | {error: string}>}
 */
export async function embeddedReportText(el) {
  if (!el) return { text: "" };
  const encoding = el.getAttribute("data-encoding");
  if (!encoding) return { text: el.textContent };
  if (encoding !== GZIP_BASE64) return { error: `The Report in this page has an unknown encoding (${encoding}).` };
  if (typeof DecompressionStream !== "function") {
    return { error: "This browser cannot decompress the Report embedded in this page (it lacks DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or newer have it). Open the page in a newer browser, or run `nstviz view` on it." };
  }
  try {
    return { text: await gunzipText(base64Bytes(el.textContent.trim())) };
  } catch (e) {
    return { error: `The Report in this page cannot be decompressed (${e && e.message ? e.message : e}). The file may be truncated or corrupted.` };
  }
}
