// ui/helpbox.js — where the keyboard-and-mouse help box sits: under the toolbar, inside the
//   viewer, so it never covers the toolbar (its own "?" button included).
// Owns: the box's position and height (set through the CSSOM: the page's CSP allows no
//   inline style markup).
// Must not: build the box's content (ui/app.js) or listen to keys (the app's key handler
//   closes it on Esc).

/**
 * Put `box` (absolutely positioned in `root`'s viewer element) just below `anchor`.
 * @param {HTMLElement} box
 * @param {HTMLElement} anchor the toolbar
 * @param {HTMLElement} host the positioned viewer element (.nstviz)
 */
export function placeBelow(box, anchor, host) {
  if (!box || !anchor || !host) return;
  const a = anchor.getBoundingClientRect(), r = host.getBoundingClientRect();
  const top = Math.max(0, Math.round(a.bottom - r.top + 6));
  box.style.top = `${top}px`;
  box.style.maxHeight = `${Math.max(120, Math.round(r.height - top - 10))}px`;
}
