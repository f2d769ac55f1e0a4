import assert from "node:assert/strict";
import { test } from "node:test";
import { bindModel, Store } from "../src/state/store.js";

function fakeModel(initial) {
  const state = { ...initial };
  const listeners = new Map();
  const log = { saves: 0 };
  return {
    log, state,
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; },
    on: (n, fn) => { if (!listeners.has(n)) listeners.set(n, []); listeners.get(n).push(fn); },
    off: (n, fn) => listeners.set(n, (listeners.get(n) || []).filter((x) => x !== fn)),
    save_changes: () => { log.saves++; },
    fromPython: (k, v) => { state[k] = v; (listeners.get(`change:${k}`) || []).forEach((fn) => fn(v)); },
    count: () => [...listeners.values()].reduce((s, l) => s + l.length, 0),
  };
}

test("UI changes of synced keys reach the model once, UI-only keys never", () => {
  const m = fakeModel({ selected_node: {}, selected_break: {}, view: {} });
  const s = new Store({ selectedNode: {}, selectedBreak: {}, view: {}, tab: "breaks" });
  bindModel(m, s);
  s.set({ selectedNode: { run: "nonstrict", graph: "g", node: "add" } });
  assert.deepEqual(m.state.selected_node, { run: "nonstrict", graph: "g", node: "add" });
  assert.equal(m.log.saves, 1);
  s.set({ tab: "source" });
  assert.equal(m.log.saves, 1);
  s.set({ selectedNode: { run: "nonstrict", graph: "g", node: "add" } }); // unchanged: no save
  assert.equal(m.log.saves, 1);
});

test("model changes reach the store without being echoed back", () => {
  const m = fakeModel({ selected_node: {}, selected_break: {}, view: {} });
  const s = new Store({ selectedNode: {}, selectedBreak: {}, view: {} });
  const seen = [];
  s.subscribe((changed, origin) => seen.push([[...changed], origin]));
  const unbind = bindModel(m, s);
  m.fromPython("selected_break", { run: "baseline", index: 2 });
  assert.deepEqual(s.get("selectedBreak"), { run: "baseline", index: 2 });
  assert.deepEqual(seen, [[["selectedBreak"], "model"]]);
  assert.equal(m.log.saves, 0);
  unbind();
  assert.equal(m.count(), 0);
});
