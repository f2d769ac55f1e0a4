// ui/dom.js — the only DOM-building helper of the viewer.
// Owns: creating elements with attributes, listeners and TEXT children.
// Must not: ever assign innerHTML/outerHTML or parse markup; data strings always become
// text nodes (textContent), so a Report can never inject markup or script.

/**
 * Create an element. `attrs` keys: "class", "title", "data-*", "aria-*", "role", "tabindex",
 * "type", "value", "href" (checked), "on<event>" (listener functions, never strings).
 * Children: strings (as text nodes), nodes, arrays, null/false (skipped).
 * @param {string} tag
 * @param {Record<string, any>|null} [attrs]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") {
        el.addEventListener(k.slice(2), v);
      } else if (k === "class") {
        el.className = String(v);
      } else if (k === "href") {
        const url = safeUrl(v);
        if (url) el.setAttribute("href", url);
      } else if (k === "style") {
        throw new Error("h(): use CSS classes, not inline style (CSP)");
      } else {
        el.setAttribute(k, v === true ? "" : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Create an SVG element (namespaced): plain attributes only (numbers, strings), and a
 * "title" child for a tooltip. No listeners, no markup.
 * @param {string} tag
 * @param {Record<string, any>|null} [attrs]
 * @param {...any} children
 */
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === "style" || k.startsWith("on")) throw new Error("svg(): no inline style or listeners (CSP)");
    el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

/** Append children (text, nodes, arrays) to `el`. */
export function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
  return el;
}

/** Remove all children of `el`. */
export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** Only http(s) links are kept (GB pages); anything else (javascript:, data:) is dropped. */
export function safeUrl(v) {
  const s = String(v).trim();
  return /^https?:\/\//i.test(s) ? s : null;
}
