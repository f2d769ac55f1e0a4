// ui/minimaptoggle.js — the toolbar button that hides or shows the panes' overview maps.
// Owns: the button, its pressed state, and the "minimap" key of the UI store (true unless the
//   user turned it off; UI-only, never synced to the model). New panes read the key.
// Must not: draw the map or move the camera (render/minimap.js does).

import { h } from "./dom.js";

/** @param {import("./app.js").App} app @returns {HTMLButtonElement} */
export function minimapToggle(app) {
  const on = () => app.store.get("minimap") !== false;
  const btn = h("button", { class: "nsv-btn nsv-btn-icon", type: "button", "data-action": "minimap", title: "show or hide the overview map",
    "aria-label": "overview map", "aria-pressed": on() ? "true" : "false", onclick: () => flip() }, "▣");
  const flip = () => {
    app.store.set({ minimap: !on() });
    btn.setAttribute("aria-pressed", on() ? "true" : "false");
    app.panes.forEach((p) => p.gc.minimap && p.gc.minimap.setEnabled(on()));
  };
  return btn;
}
