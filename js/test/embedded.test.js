// The standalone page's data element: gzip+base64 (what html.py writes) or JSON text (older pages).
import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { embeddedReportText, gunzipText, GZIP_BASE64 } from "../src/host/embedded.js";

const element = (text, encoding) => ({ textContent: text, getAttribute: (k) => (k === "data-encoding" ? encoding ?? null : null) });

test("gzip+base64 data decodes to the JSON text, non-ASCII and escapes intact", async () => {
  const json = JSON.stringify({ schema_version: 3, title: "é \u2028 \\u003c/script> 日本" }) + " ".repeat(70000);
  const b64 = gzipSync(Buffer.from(json, "utf-8")).toString("base64");
  assert.deepEqual(await embeddedReportText(element(`\n${b64}\n`, GZIP_BASE64)), { text: json });
});

test("JSON text (pages written before) is read as it is; no element is no text", async () => {
  assert.deepEqual(await embeddedReportText(element('{"a": 1}')), { text: '{"a": 1}' });
  assert.deepEqual(await embeddedReportText(null), { text: "" });
});

test("corrupted data and unknown encodings are messages, never a throw", async () => {
  const bad = await embeddedReportText(element("H4sI!!not base64", GZIP_BASE64));
  assert.match(bad.error, /cannot be decompressed.*truncated or corrupted/);
  const notGzip = await embeddedReportText(element(Buffer.from("plain").toString("base64"), GZIP_BASE64));
  assert.match(notGzip.error, /cannot be decompressed/);
  assert.match((await embeddedReportText(element("x", "brotli"))).error, /unknown encoding \(brotli\)/);
});

test("a big Report is inflated a slice at a time, the event loop getting turns, to the same text", async () => {
  const json = JSON.stringify({ nodes: Array.from({ length: 20000 }, (_, i) => ({ name: `n${i}`, op: "call_function" })) });
  const gz = gzipSync(Buffer.from(json, "utf-8"));
  let turns = 0;
  const ticking = setInterval(() => { turns += 1; }, 0);
  try {
    assert.equal(await gunzipText(new Uint8Array(gz), { sliceBytes: 512, sliceMs: -1, slicedFrom: 0 }), json);
  } finally {
    clearInterval(ticking);
  }
  assert.ok(gz.length > 512 * 4 && turns >= 2, `${gz.length} bytes, ${turns} turns of the event loop`);
  await assert.rejects(gunzipText(new Uint8Array(gz.subarray(0, gz.length - 9)), { slicedFrom: 0 }));
  assert.equal(await gunzipText(new Uint8Array(gz)), json); // small: in one go
});
