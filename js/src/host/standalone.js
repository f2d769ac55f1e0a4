// host/standalone.js — entry of the standalone HTML page (IIFE bundle).
// Owns: reading the Report from <script id="nstviz-report"> (gzip+base64 or JSON text: host/embedded.js),
//   a stand-in for the anywidget model (get/set/on/off/save_changes/send), keeping the
//   pristine page text for "Export HTML", and calling the same render as the widget.
// Must not: fetch anything, eval anything, or use inline event handlers (strict CSP).

import viewer from "../index.js";
import { embeddedReportText } from "./embedded.js";

/** A minimal stand-in for the anywidget model (same trait names as the widget). */
export function makeModel(initial) {
  const state = { ...initial };
  const listeners = new Map();
  const fire = (name, arg) => (listeners.get(name) || []).slice().forEach((fn) => fn(arg));
  return {
    get: (k) => state[k],
    set: (k, v) => {
      const old = state[k];
      state[k] = v;
      if (old !== v) fire(`change:${k}`, v);
    },
    on: (name, fn) => { if (!listeners.has(name)) listeners.set(name, []); listeners.get(name).push(fn); },
    off: (name, fn) => {
      if (!name) { listeners.clear(); return; }
      const l = listeners.get(name);
      if (!l) return;
      if (!fn) listeners.delete(name);
      else listeners.set(name, l.filter((x) => x !== fn));
    },
    save_changes: () => {},
    send: (msg) => fire("msg:custom", msg && msg.type === "export_html" ? null : null),
  };
}

/**
 * The page as it was written (for "Export HTML"): a copy of the document with the viewer's
 * rendering removed from the root element. Built only when asked, so loading stays cheap.
 */
function pristineHtml() {
  const doc = document.documentElement.cloneNode(true);
  const root = doc.querySelector("#nstviz-root");
  if (root) {
    while (root.firstChild) root.removeChild(root.firstChild);
    for (const a of [...root.attributes]) if (a.name !== "id") root.removeAttribute(a.name);
  }
  const summary = doc.querySelector("#nstviz-text-summary");
  if (summary) summary.setAttribute("open", "");
  return "<!DOCTYPE html>\n" + doc.outerHTML;
}

async function start() {
  const steps = { boot: performance.now() };
  const data = await embeddedReportText(document.getElementById("nstviz-report"));
  steps.inflated = performance.now();
  let el = document.getElementById("nstviz-root");
  if (!el) {
    el = document.createElement("div");
    el.id = "nstviz-root";
    document.body.appendChild(el);
  }
  const model = makeModel({
    report_json: data.text || "",
    progress: { phase: "done", message: "", elapsed_s: 0, runs_done: 0, runs_total: 0 },
    selected_node: {}, selected_break: {}, view: {}, standalone: true,
  });
  el.classList.add("nstviz-standalone");
  viewer.render({ model, el }, { standalone: true, pristineHtml, loadError: data.error, steps });
}

// Start in a task of its own, not inside the HTML parser's task (keeps long tasks short).
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => setTimeout(start, 0));
else setTimeout(start, 0);
