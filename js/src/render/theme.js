// render/theme.js — colours for the canvas, read from the viewer's CSS custom properties.
// Owns: turning --nsv-* CSS variables (which follow JupyterLab's --jp-* theme variables,
//   with fallbacks for the standalone page) into concrete colours, and the palettes for
//   non-strict regions (reserved warm hues) and for the merged view (cool categorical).
// Must not: draw, or hard-code colours anywhere else in the viewer.

const VARS = {
  bg: "--nsv-canvas-bg", fg: "--nsv-fg", muted: "--nsv-muted", border: "--nsv-border",
  node: "--nsv-node-bg", nodeBorder: "--nsv-node-border", input: "--nsv-input", output: "--nsv-output",
  attr: "--nsv-attr", edge: "--nsv-edge", group: "--nsv-group-bg", groupBorder: "--nsv-group-border",
  region: "--nsv-region", regionBg: "--nsv-region-bg", select: "--nsv-select", hit: "--nsv-hit",
  collapsed: "--nsv-collapsed-bg",
};

/** Reserved colours of non-strict regions (one hue family: amber/orange). */
export const REGION_COLORS = ["#f59e0b", "#ea580c", "#d97706", "#fb923c", "#c2410c", "#fbbf24"];
/** Merged view: one colour per baseline graph (never orange, which regions own). */
export const GRAPH_COLORS = ["#3b82f6", "#14b8a6", "#a855f7", "#ec4899", "#22c55e", "#6366f1", "#06b6d4", "#84cc16", "#e11d48", "#64748b"];

export function regionColor(r) {
  return REGION_COLORS[r % REGION_COLORS.length];
}

export function graphColor(b) {
  return GRAPH_COLORS[b % GRAPH_COLORS.length];
}

/** Read the theme from the computed style of `el` (falls back to a light theme). */
export function readTheme(el) {
  const cs = getComputedStyle(el);
  const get = (name, fb) => (cs.getPropertyValue(name) || "").trim() || fb;
  const t = {
    bg: get(VARS.bg, "#ffffff"), fg: get(VARS.fg, "#1f2937"), muted: get(VARS.muted, "#6b7280"),
    border: get(VARS.border, "#d1d5db"), node: get(VARS.node, "#ffffff"), nodeBorder: get(VARS.nodeBorder, "#94a3b8"),
    input: get(VARS.input, "#16a34a"), output: get(VARS.output, "#334155"), attr: get(VARS.attr, "#94a3b8"),
    edge: get(VARS.edge, "#94a3b8"), group: get(VARS.group, "rgba(100,116,139,0.06)"),
    groupBorder: get(VARS.groupBorder, "#cbd5e1"), region: get(VARS.region, "#f59e0b"),
    regionBg: get(VARS.regionBg, "rgba(245,158,11,0.10)"), select: get(VARS.select, "#2563eb"),
    hit: get(VARS.hit, "#facc15"), collapsed: get(VARS.collapsed, "#f1f5f9"),
    font: get("--nsv-font", "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"),
    mono: get("--nsv-mono", "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"),
  };
  t.dark = isDark(t.bg);
  return t;
}

let probe = null;
/** Any CSS colour ("#111", "rgb(...)", "white") to the canvas's canonical form. */
function canonical(color) {
  if (!probe) probe = document.createElement("canvas").getContext("2d");
  probe.fillStyle = "#000000";
  probe.fillStyle = color;
  return probe.fillStyle;
}

function isDark(color) {
  color = canonical(color);
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (m) {
    const v = parseInt(m[1], 16);
    const l = 0.299 * (v >> 16) + 0.587 * ((v >> 8) & 255) + 0.114 * (v & 255);
    return l < 128;
  }
  const rgb = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(color);
  if (rgb) return 0.299 * +rgb[1] + 0.587 * +rgb[2] + 0.114 * +rgb[3] < 128;
  return false;
}
