// state/store.js — UI state of one viewer instance, and its sync with the host model.
// Owns: the store (selection, view, panes, active tab, search text), change notification,
//   and mapping the synced traits (selected_node, selected_break, view) to and from it.
// Must not: touch the DOM, lay out or draw; UI-only keys (tab, search) never reach the model.

export class Store {
  constructor(initial) {
    this.state = { ...initial };
    this.subs = new Set();
  }

  get(k) {
    return this.state[k];
  }

  /** Merge `patch` into the state; notify with the set of changed keys. */
  set(patch, origin = "ui") {
    const changed = new Set();
    for (const [k, v] of Object.entries(patch)) {
      if (!sameValue(this.state[k], v)) { this.state[k] = v; changed.add(k); }
    }
    if (changed.size) for (const fn of [...this.subs]) fn(changed, origin);
    return changed;
  }

  subscribe(fn) {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }
}

function sameValue(a, b) {
  if (a === b) return true;
  if (a && b && typeof a === "object" && typeof b === "object") return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

const SYNCED = {
  selected_node: "selectedNode",
  selected_break: "selectedBreak",
  view: "view",
};

/**
 * Two-way binding of the synced traits. Model -> store changes carry origin "model" so they
 * are not echoed back.
 * @returns {() => void} cleanup
 */
export function bindModel(model, store) {
  const offs = [];
  for (const [trait, key] of Object.entries(SYNCED)) {
    const handler = () => store.set({ [key]: model.get(trait) || {} }, "model");
    model.on(`change:${trait}`, handler);
    offs.push(() => model.off(`change:${trait}`, handler));
  }
  const unsub = store.subscribe((changed, origin) => {
    if (origin === "model") return;
    let dirty = false;
    for (const [trait, key] of Object.entries(SYNCED)) {
      if (changed.has(key)) { model.set(trait, store.get(key) || {}); dirty = true; }
    }
    if (dirty) {
      try { model.save_changes(); } catch { /* a host without a kernel connection */ }
    }
  });
  offs.push(unsub);
  return () => offs.forEach((f) => f());
}
