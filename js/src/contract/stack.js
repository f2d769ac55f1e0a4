// contract/stack.js — a run's graphs at one level, stacked: the fragments the baseline run as
//   written compiles between graph breaks, in the Report's order (compile order: frame, compile,
//   fragment), joined into one graph whose top-level groups are the fragments, with one "band"
//   node between two consecutive fragments that names the graph break between them.
// Owns: the stacked graph's id ("stack:<level>"), which fragments it holds, which Report break
//   separates two fragments, and fixing its group tree (fragment headers, strays into their
//   fragment), the band boxes' full width after layout.
// Must not: touch the DOM, draw, or change the Report's graphs (nodes are copied, renamed
//   "<graph id>·<name>"; `orig` keeps the Report's graph id and node name).

import { namesFrameCompile } from "./compileid.js";

export const STACK_PREFIX = "stack:";
/** Separator between a fragment's graph id and a node name in the stacked graph. */
export const SEP = "·";

export const stackId = (level) => `${STACK_PREFIX}${level}`;
export const isStackId = (id) => typeof id === "string" && id.startsWith(STACK_PREFIX);

/** The non-empty graphs of `run` at `level`, in the Report's order. */
export function fragmentsOf(index, run, level) {
  return index.graphs(run).filter((g) => g.level === level && g.nodes && g.nodes.length);
}

/**
 * Levels whose graphs run in compile order: Dynamo and the ATen forward (or inference) graphs.
 * Backward graphs run in the reverse order, and between them no break stands: never stacked.
 */
export const STACK_LEVELS = new Set(["dynamo", "aten_forward", "aten_inference"]);

/** More fragments than this are not stacked (the top level would be split into chunks). */
export const MAX_FRAGMENTS = 400;

/** Whether `run` at `level` has several graphs to stack. */
export function canStack(index, run, level) {
  if (!STACK_LEVELS.has(level)) return false;
  const k = fragmentsOf(index, run, level).length;
  return k > 1 && k <= MAX_FRAGMENTS;
}


/** The Dynamo graph id of the compile that made graph g (breaks name Dynamo graphs). */
function dynamoIdOf(index, run, g) {
  if (g.level === "dynamo") return g.id;
  const d = index.graphs(run).find((x) => x.level === "dynamo" && x.frame_id === g.frame_id
    && x.compile_id === g.compile_id && (x.attempt || 0) === (g.attempt || 0));
  return d ? d.id : null;
}

/**
 * Index (in the run's breaks) of the break between fragments a and b, or -1: the break that
 * names both graphs, else the one b follows, else the one that ended a (by name, else a's
 * compile among those it split), else (b is a resume function) the break of the band before.
 * A break of b's own compile ends b: it never stands before b.
 */
export function breakBetween(index, run, a, b, prev = -1) {
  const breaks = (index.run(run) || {}).breaks || [];
  const da = dynamoIdOf(index, run, a), db = dynamoIdOf(index, run, b);
  const find = (pred) => breaks.findIndex(pred);
  let k = find((x) => da && db && x.graph_before === da && x.graph_after === db);
  if (k < 0) k = find((x) => db && x.graph_after === db);
  if (k < 0) k = find((x) => da && x.graph_before === da);
  if (k < 0) {
    const ids = (x) => [...(x.compile_ids || []), ...(x.splits || []).map((s) => s && s.compile_id)];
    k = find((x) => ids(x).some((cid) => namesFrameCompile(cid, a) && !cid.attempt && cid.compiled_autograd_id == null));
  }
  if (k < 0 && prev >= 0 && /resume_in/.test(String(b.function || ""))) k = prev;
  return k;
}

/**
 * The stacked graph `stack:<level>` of a run, or null when the run has fewer than two graphs
 * there. `bandLines(breakIndex)` words a band, [what, where] (the caller formats locations).
 */
export function stackGraph(index, run, id, bandLines) {
  if (!isStackId(id)) return null;
  const level = id.slice(STACK_PREFIX.length);
  if (!canStack(index, run, level)) return null;
  const frags = fragmentsOf(index, run, level);
  const nodes = [];
  const fragments = [], bands = [];
  let prev = -1, ops = 0;
  frags.forEach((g, k) => {
    const seg = `F${k}`;
    const rename = (name) => `${g.id}${SEP}${name}`;
    if (k > 0) {
      const bi = breakBetween(index, run, frags[k - 1], g, prev);
      prev = bi;
      const name = `graph break ${k}`;
      const lines = bandLines(bi, frags[k - 1], g);
      const last = frags[k - 1].nodes[frags[k - 1].nodes.length - 1];
      nodes.push({ name, op: "call_function", target: "graph break", inputs: [`${frags[k - 1].id}${SEP}${last.name}`],
        region: null, stack: null, module: null, band: { k, breakIndex: bi, lines, text: lines.join(" · ") } });
      bands.push({ name, breakIndex: bi });
    }
    const start = nodes.length;
    let linked = false;
    for (const nd of g.nodes) {
      const copy = { ...nd, name: rename(nd.name), inputs: (nd.inputs || []).map(rename),
        module: nd.module ? `${seg}.${nd.module}` : seg, orig: { graph: g.id, name: nd.name }, frag: k };
      // the band before a fragment feeds its inputs, so the layout puts it between the two
      if (k > 0 && nd.op === "placeholder") { copy.inputs = [...copy.inputs, `graph break ${k}`]; linked = true; }
      nodes.push(copy);
    }
    if (k > 0 && !linked) nodes[start].inputs = [...nodes[start].inputs, `graph break ${k}`];
    fragments.push({ graph: g.id, seg, function: g.function || null, nodes: g.nodes.length });
    ops += g.op_count || 0;
  });
  return { id, level, function: null, nodes, op_count: ops, truncated: frags.some((g) => g.truncated),
    frame_id: null, compile_id: null, stacked: { run, level, fragments, bands } };
}

/**
 * Fix the group tree of a stacked graph: the top level is fragment, band, fragment, ... in
 * order; each fragment's group is headed by its graph id and function; nodes the tree put
 * elsewhere (a band follows its users into the next fragment; inputs nothing uses stay at the
 * top) go where they belong. Records `tree.stackGroups` (group id per fragment).
 */
export function fixStackTree(gm, tree) {
  const st = gm.graph.stacked;
  if (!st) return;
  const { groups, leafGroup } = tree;
  const root = groups[0];
  const bySeg = new Map();
  for (const gid of root.groupChildren) bySeg.set(groups[gid].key, gid);
  tree.stackGroups = st.fragments.map((f) => bySeg.get(f.seg) ?? -1);
  st.fragments.forEach((f, k) => {
    const gid = tree.stackGroups[k];
    if (gid >= 0) groups[gid].label = `${f.graph}${f.function ? " · " + f.function : ""}`;
  });
  const move = (i, to) => {
    const from = leafGroup[i];
    if (from === to) return;
    const g = groups[from];
    g.children = g.children.filter((x) => x !== i);
    g.items = g.items.filter((x) => x !== i);
    for (let a = from; a >= 0 && a !== 0; a = groups[a].parent) groups[a].leafCount--;
    const t = groups[to];
    leafGroup[i] = to;
    t.children.push(i);
    for (let a = to; a > 0; a = groups[a].parent) {
      groups[a].leafCount++;
      groups[a].minIndex = Math.min(groups[a].minIndex, i);
      groups[a].maxIndex = Math.max(groups[a].maxIndex, i);
    }
    if (to !== 0) {
      const key = (it) => (it >= 0 ? it : groups[-it - 1].minIndex);
      const at = t.items.findIndex((it) => key(it) > i);
      if (at < 0) t.items.push(i); else t.items.splice(at, 0, i);
    }
  };
  const bandIdx = [];
  for (let i = 0; i < gm.n; i++) {
    const nd = gm.nodes[i];
    if (nd.orig && nd.op === "placeholder") gm.labels[i] = nd.orig.name; // not the renamed "<graph>·<name>"
    if (nd.band) { move(i, 0); bandIdx[nd.band.k] = i; }
    else if (leafGroup[i] === 0 && nd.frag != null && tree.stackGroups[nd.frag] >= 0) move(i, tree.stackGroups[nd.frag]);
  }
  // the top level in execution order: fragment 0, band 1, fragment 1, ...
  const top = [];
  tree.stackGroups.forEach((gid, k) => {
    if (k > 0 && bandIdx[k] != null) top.push(bandIdx[k]);
    if (gid >= 0) top.push(-(gid + 1));
  });
  const placed = new Set(top);
  root.items = top.concat(root.items.filter((it) => !placed.has(it)));
}

/** Band boxes span the stacked view's width (edges still end at their centres). */
export function widenBands(view, gm) {
  if (!gm.graph.stacked) return;
  for (const b of view.boxes) {
    if (b.item < gm.n && gm.nodes[b.item].band) { b.x = 0; b.w = view.width; }
  }
}
