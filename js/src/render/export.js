// render/export.js — exports of the current graph view (SVG, PNG) and file downloads.
// Owns: building an SVG document from laid-out geometry (text escaped by the DOM
//   serializer, never by string concatenation), PNG from the canvas, and saving a Blob.
// Must not: lay out, or read anything but the scene it is given.

import { KIND_INPUT, KIND_NONSTRICT, KIND_OUTPUT, tensorText } from "../contract/graphmodel.js";
import { groupLabel, HEADER } from "../layout/view.js";
import { graphColor, regionColor } from "./theme.js";

const NS = "http://www.w3.org/2000/svg";
const MAX_SVG_BOXES = 20000;

/** Save a Blob as a file through a temporary link. */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  a.rel = "noopener";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 4000);
}

/** SVG text of the laid-out view (the whole current expansion, not only the viewport). */
export function sceneToSvg(scene, theme) {
  const { view: v, gm, tree, expanded } = scene;
  const n = v.n;
  const m = 16;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("xmlns", NS);
  svg.setAttribute("width", String(Math.ceil(v.width + 2 * m)));
  svg.setAttribute("height", String(Math.ceil(v.height + 2 * m)));
  svg.setAttribute("viewBox", `${-m} ${-m} ${Math.ceil(v.width + 2 * m)} ${Math.ceil(v.height + 2 * m)}`);
  svg.setAttribute("font-family", "system-ui, sans-serif");
  const el = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, val] of Object.entries(attrs)) e.setAttribute(k, String(val));
    if (text != null) e.textContent = text;
    return e;
  };
  svg.appendChild(el("rect", { x: -m, y: -m, width: v.width + 2 * m, height: v.height + 2 * m, fill: theme.bg }));
  const boxes = v.boxes.slice(0, MAX_SVG_BOXES);
  for (const b of boxes) {
    if (b.item < n || !expanded.has(b.item - n)) continue;
    const g = tree.groups[b.item - n];
    const reg = g.kind === "region";
    svg.appendChild(el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 8, fill: reg ? theme.regionBg : theme.group, stroke: reg ? regionColor(g.region) : theme.groupBorder }));
    svg.appendChild(el("text", { x: b.x + 10, y: b.y + HEADER / 2 + 4, "font-size": 11, "font-weight": 600, fill: theme.muted }, groupLabel(tree, g.id) + (g.moduleType ? " · " + g.moduleType : "")));
  }
  const edges = el("g", { fill: "none", stroke: theme.edge, "stroke-width": 1.1 });
  for (const e of v.edges) {
    const p = e.pts;
    let d = `M${p[0].toFixed(1)} ${p[1].toFixed(1)}`;
    let px = p[0], py = p[1];
    for (let j = 2; j < p.length; j += 2) {
      const my = (py + p[j + 1]) / 2;
      d += `C${px.toFixed(1)} ${my.toFixed(1)} ${p[j].toFixed(1)} ${my.toFixed(1)} ${p[j].toFixed(1)} ${p[j + 1].toFixed(1)}`;
      px = p[j]; py = p[j + 1];
    }
    edges.appendChild(el("path", { d }));
  }
  svg.appendChild(edges);
  for (const b of boxes) {
    const it = b.item;
    if (it >= n) {
      if (expanded.has(it - n)) continue;
      const g = tree.groups[it - n];
      svg.appendChild(el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: 7, fill: g.kind === "region" ? regionColor(g.region) + "38" : theme.collapsed, stroke: theme.groupBorder }));
      svg.appendChild(el("text", { x: b.x + 12, y: b.y + 20, "font-size": 12, "font-weight": 600, fill: theme.fg }, groupLabel(tree, g.id)));
      svg.appendChild(el("text", { x: b.x + 12, y: b.y + 37, "font-size": 10.5, fill: theme.muted }, `${g.leafCount} nodes${g.moduleType ? " · " + g.moduleType : ""}`));
      continue;
    }
    const k = gm.kind[it], r = gm.region[it];
    let fill = theme.node, stroke = theme.nodeBorder, color = theme.fg;
    if (scene.colorMode === "baseline" && gm.baseline[it] >= 0) { fill = graphColor(gm.baseline[it]) + "38"; stroke = graphColor(gm.baseline[it]); }
    else if (r >= 0) { fill = regionColor(r) + "33"; stroke = regionColor(r); }
    if (k === KIND_INPUT) { stroke = theme.input; }
    if (k === KIND_OUTPUT) { fill = theme.output; stroke = theme.output; color = "#ffffff"; }
    const rect = el("rect", { x: b.x, y: b.y, width: b.w, height: b.h, rx: k === KIND_INPUT || k === KIND_OUTPUT ? b.h / 2 : 5, fill, stroke });
    if (k === KIND_NONSTRICT) { rect.setAttribute("stroke", theme.region); rect.setAttribute("stroke-dasharray", "6 3"); rect.setAttribute("stroke-width", "2"); }
    const title = el("title", {}, gm.nodes[it].name);
    rect.appendChild(title);
    svg.appendChild(rect);
    const t = gm.nodes[it].tensors;
    svg.appendChild(el("text", { x: b.x + 8, y: b.y + (t && t.length ? 15 : b.h / 2 + 4), "font-size": 11, "font-weight": 600, fill: color }, gm.labels[it]));
    if (t && t.length) svg.appendChild(el("text", { x: b.x + 8, y: b.y + 28, "font-size": 10, fill: theme.muted, "font-family": "monospace" }, tensorText(t[0])));
  }
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(svg);
}

/** PNG of what the canvas shows now. */
export function canvasToPng(canvas) {
  return new Promise((resolve) => canvas.toBlob((b) => resolve(b), "image/png"));
}
