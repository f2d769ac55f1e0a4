// interaction/panzoom.js — mouse, wheel, touch-pad and keyboard input on the graph canvas.
// Owns: drag to pan, ctrl/cmd+wheel (and pinch) to zoom at the cursor, wheel to pan, click
//   and double-click and hover dispatch (as box indices), and canvas keyboard shortcuts.
//   The wheel rule: a plain wheel belongs to the page (a notebook scrolls past the graph)
//   unless the canvas is active (clicked into, until the pointer leaves it, Esc, or focus goes
//   elsewhere) or the host says the wheel is free (h.wheelFree(): a page that does not scroll);
//   Ctrl/Cmd+wheel always zooms. A wheel let through calls h.onWheelPassed().
// Must not: change what is selected or expanded itself; it calls the handlers it is given.

/**
 * @param {import("../render/canvas.js").GraphCanvas} gc
 * @param {{onClick(idx:number, ev:MouseEvent):void, onDblClick(idx:number):void,
 *   onHover(idx:number, ev:MouseEvent|null):void, onKey?(ev:KeyboardEvent):boolean,
 *   wheelFree?():boolean, onWheelPassed?(ev:WheelEvent):void,
 *   onCamera?(before:{k:number, tx:number, ty:number}):void}} h  onCamera: after the user moved the camera
 * @returns {() => void} cleanup
 */
export function attachPanZoom(gc, h) {
  const c = gc.canvas;
  let drag = null;
  let hoverIdx = -1;
  let active = false; // the plain wheel is the graph's (see the rule above)
  const local = (ev) => {
    const r = c.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  };
  const down = (ev) => {
    if (ev.button !== 0) return;
    active = true;
    c.focus({ preventScroll: true });
    const [x, y] = local(ev);
    drag = { x, y, sx: x, sy: y, moved: false, id: ev.pointerId };
    c.setPointerCapture(ev.pointerId);
  };
  const move = (ev) => {
    const [x, y] = local(ev);
    if (drag) {
      const dx = x - drag.x, dy = y - drag.y;
      if (!drag.moved && Math.abs(x - drag.sx) + Math.abs(y - drag.sy) > 4) drag.moved = true;
      if (drag.moved) {
        const before = { ...gc.cam };
        gc.panBy(dx, dy);
        if (h.onCamera) h.onCamera(before);
        c.classList.add("nsv-grabbing");
        if (hoverIdx !== -1) { hoverIdx = -1; h.onHover(-1, null); }
      }
      drag.x = x; drag.y = y;
      return;
    }
    const idx = gc.hitTest(x, y);
    if (idx !== hoverIdx) hoverIdx = idx;
    h.onHover(idx, ev);
    c.classList.toggle("nsv-pointer", idx >= 0);
  };
  const up = (ev) => {
    if (!drag) return;
    const wasDrag = drag.moved;
    drag = null;
    c.classList.remove("nsv-grabbing");
    try { c.releasePointerCapture(ev.pointerId); } catch { /* already released */ }
    if (!wasDrag) {
      const [x, y] = local(ev);
      h.onClick(gc.hitTest(x, y), ev);
    }
  };
  const leave = () => { active = false; hoverIdx = -1; h.onHover(-1, null); };
  const blur = () => { active = false; };
  const dbl = (ev) => {
    const [x, y] = local(ev);
    const idx = gc.hitTest(x, y);
    const before = { ...gc.cam };
    if (idx >= 0) h.onDblClick(idx);
    else gc.zoomAt(1.6, x, y);
    if (h.onCamera) h.onCamera(before);
  };
  const wheel = (ev) => {
    if (!(ev.ctrlKey || ev.metaKey) && !active && !(h.wheelFree && h.wheelFree())) {
      if (h.onWheelPassed) h.onWheelPassed(ev); // the page scrolls; say how to reach the graph
      return;
    }
    ev.preventDefault();
    const [x, y] = local(ev);
    const scale = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
    const before = { ...gc.cam };
    if (ev.ctrlKey || ev.metaKey) gc.zoomAt(Math.exp(-ev.deltaY * scale * 0.0025), x, y);
    else if (ev.shiftKey && !ev.deltaX) gc.panBy(-ev.deltaY * scale, 0);
    else gc.panBy(-ev.deltaX * scale, -ev.deltaY * scale);
    if (h.onCamera) h.onCamera(before);
  };
  const key = (ev) => {
    if (ev.key === "Escape") active = false;
    if (h.onKey && h.onKey(ev)) return;
    const step = 60;
    const cx = gc.W / 2, cy = gc.H / 2;
    const map = {
      ArrowLeft: () => gc.panBy(step, 0), ArrowRight: () => gc.panBy(-step, 0),
      ArrowUp: () => gc.panBy(0, step), ArrowDown: () => gc.panBy(0, -step),
      "+": () => gc.zoomAt(1.25, cx, cy), "=": () => gc.zoomAt(1.25, cx, cy), "-": () => gc.zoomAt(0.8, cx, cy),
      "0": () => gc.fit(), f: () => gc.fit(), h: () => gc.home(),
    };
    const fn = map[ev.key];
    if (fn && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      const before = { ...gc.cam };
      fn();
      ev.preventDefault();
      if (h.onCamera) h.onCamera(before);
    }
  };
  c.addEventListener("pointerdown", down);
  c.addEventListener("pointermove", move);
  c.addEventListener("pointerup", up);
  c.addEventListener("pointerleave", leave);
  c.addEventListener("dblclick", dbl);
  c.addEventListener("wheel", wheel, { passive: false });
  c.addEventListener("keydown", key);
  c.addEventListener("blur", blur);
  return () => {
    c.removeEventListener("blur", blur);
    c.removeEventListener("pointerdown", down);
    c.removeEventListener("pointermove", move);
    c.removeEventListener("pointerup", up);
    c.removeEventListener("pointerleave", leave);
    c.removeEventListener("dblclick", dbl);
    c.removeEventListener("wheel", wheel);
    c.removeEventListener("keydown", key);
  };
}
