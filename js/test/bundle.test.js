import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as esbuild from "esbuild";

const src = new URL("../src/", import.meta.url).pathname;

function sources(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : [p];
  });
}

test("both entries bundle without errors and stay lean", async () => {
  for (const [entry, format] of [["index.js", "esm"], ["host/standalone.js", "iife"]]) {
    const res = await esbuild.build({ entryPoints: [join(src, entry)], bundle: true, minify: true, format, write: false, logLevel: "silent" });
    const size = res.outputFiles[0].contents.length;
    assert.ok(size < 200 * 1024, `${entry}: ${size} bytes`);
    const code = res.outputFiles[0].text;
    // CSP: nothing that needs 'unsafe-eval', no network, no workers
    for (const bad of ["eval(", "new Function", "fetch(", "XMLHttpRequest", "Worker(", "import(\"http"]) assert.ok(!code.includes(bad), `${entry} contains ${bad}`);
  }
});

test("no module builds markup from strings; every module states what it owns", () => {
  for (const file of sources(src)) {
    const text = readFileSync(file, "utf8");
    const code = text.split("\n").filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join("\n");
    for (const bad of ["innerHTML", "outerHTML =", "insertAdjacentHTML", "document.write", "setAttribute(\"style\""]) {
      assert.ok(!code.includes(bad), `${file} uses ${bad}`);
    }
    if (file.endsWith(".js")) assert.match(text.split("\n")[0], /^\/\/ [\w/.]+ — /, `${file}: first line must say what the module owns`);
    else if (file.endsWith(".css")) assert.match(text, /^\/\* [\w/.]+\.css — /, `${file}: must open with what it styles`);
  }
});

test("every CSS rule is scoped to the viewer (no global styles inside JupyterLab)", () => {
  // viewer.css and the files it @imports (ui/compiles.css), as esbuild bundles them
  let css = sources(src).filter((f) => f.endsWith(".css")).map((f) => readFileSync(f, "utf8")).join("\n")
    .replace(/\/\*[\s\S]*?\*\//g, "").replace(/@import[^;]*;/g, "");
  css = css.replace(/@keyframes[^{]*\{([^{}]*\{[^{}]*\})*[^{}]*\}/g, "");
  css = css.replace(/@(media|container)[^{]*\{/g, "");
  const selectors = [...css.matchAll(/([^{}]+)\{[^{}]*\}/g)].map((m) => m[1].trim()).filter(Boolean);
  assert.ok(selectors.length > 50);
  for (const sel of selectors) {
    for (const one of sel.split(",")) assert.match(one, /\.nstviz|\.nsv-/, `unscoped selector: ${one.trim()}`);
  }
});
