// index.js — the anywidget front-end module (AFM) entry: `export default { render }`.
// Owns: wiring a host model and element to one App, and returning its cleanup.
// Must not: contain viewer logic; everything else lives in ui/, contract/, layout/, render/.

import { App } from "./ui/app.js";

/**
 * @param {{model: any, el: HTMLElement}} ctx
 * @returns {() => void} cleanup
 */
function render({ model, el }, host) {
  let app;
  try {
    app = new App(model, el, host || {});
  } catch (e) {
    // never leave a half-rendered view: show the failure as text
    el.textContent = "";
    const box = document.createElement("div");
    box.className = "nsv-fatal";
    box.setAttribute("role", "alert");
    box.textContent = `nstviz viewer failed to start: ${e && e.message ? e.message : e}`;
    el.appendChild(box);
    el.dataset.nstvizError = "1";
    el.dataset.nstvizReady = "1";
    return () => { el.textContent = ""; };
  }
  return () => app.destroy();
}

export default { render };
