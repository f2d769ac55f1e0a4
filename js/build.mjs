// build.mjs — builds the viewer bundle into ../nstviz/static/ with esbuild.
//   viewer.js      ESM for anywidget (export default { render })
//   standalone.js  IIFE for the standalone HTML page
//   viewer.css     styles for both
// Usage: node build.mjs [--watch] [--dev]   (no CDN imports: everything is bundled)

import * as esbuild from "esbuild";
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "nstviz", "static");
const watch = process.argv.includes("--watch");
const dev = process.argv.includes("--dev");
mkdirSync(out, { recursive: true });

const common = {
  bundle: true,
  minify: !dev,
  sourcemap: dev ? "inline" : false,
  target: ["chrome100", "firefox100", "safari15"],
  legalComments: "none",
  logLevel: "info",
  charset: "utf8",
};
const builds = [
  { ...common, entryPoints: [join(here, "src", "index.js")], format: "esm", outfile: join(out, "viewer.js") },
  { ...common, entryPoints: [join(here, "src", "host", "standalone.js")], format: "iife", outfile: join(out, "standalone.js") },
  { ...common, entryPoints: [join(here, "src", "viewer.css")], outfile: join(out, "viewer.css"), loader: { ".css": "css" } },
];

if (watch) {
  for (const b of builds) {
    const ctx = await esbuild.context(b);
    await ctx.watch();
  }
  console.log("watching js/src for changes…");
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  for (const f of ["viewer.js", "standalone.js", "viewer.css"]) {
    console.log(`${f}: ${(statSync(join(out, f)).size / 1024).toFixed(1)} KiB`);
  }
}
