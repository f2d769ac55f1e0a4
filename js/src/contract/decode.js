// contract/decode.js — reading the Report: JSON parse, schema_version check, indexes.
// Owns: turning `report_json` text into a checked Report plus lookup helpers (run order,
//   break status from report.diff by the Report's own break ids, graph lookup). Reports a clear error instead of a
//   half-valid object.
// Must not: touch the DOM, lay out or draw, or mutate the Report; recompute anything the
//   Report already holds (break identity, counts, the headline, per-break counts and their
//   texts in break.tally, the rank order in run.break_order).

/** The Report schema version this viewer reads (Python upgrades older Reports when it loads them). */
export const SUPPORTED_SCHEMA = 3;

/** Levels in display order, with readable names. */
export const LEVELS = [
  ["dynamo", "Dynamo"],
  ["aten_forward", "ATen forward"],
  ["aten_backward", "ATen backward"],
  ["aten_inference", "ATen inference"],
  ["inductor_post_grad", "Inductor post-grad"],
];
export const LEVEL_NAMES = Object.fromEntries(LEVELS);

/**
 * Parse and check Report JSON text.
 * @param {string} text
 * @returns {{ok: true, report: any, index: ReportIndex} | {ok: false, error: string}}
 */
export function decodeReport(text) {
  const parsed = parseReport(text);
  return parsed.ok ? checkReport(parsed.data) : parsed;
}

/** Step 1 of decodeReport (JSON only), so big Reports can be checked in a later task. */
export function parseReport(text) {
  if (typeof text !== "string" || text.trim() === "") {
    return { ok: false, error: "No Report data was given to the viewer." };
  }
  try {
    if (!inParts(text)) return { ok: true, data: JSON.parse(text) };
    const steps = readParts(text);
    let step;
    while (!(step = steps.next()).done);
    return { ok: true, data: step.value };
  } catch (e) {
    return notJson(e);
  }
}

/**
 * parseReport for a big Report: a Report written in parts is parsed a part at a time, the
 * page's event loop getting a turn (``nextTask``) every ``sliceMs`` of parsing.
 */
export async function parseReportSliced(text, nextTask, sliceMs = 30) {
  if (typeof text !== "string" || !inParts(text)) return parseReport(text);
  try {
    const steps = readParts(text);
    let since = performance.now();
    let step;
    while (!(step = steps.next()).done) {
      if (performance.now() - since > sliceMs) {
        await nextTask();
        since = performance.now();
      }
    }
    return { ok: true, data: step.value };
  } catch (e) {
    return notJson(e);
  }
}

/** Whether the text is a Report in parts (nstviz/render/html.py's report_text_for_html): it starts with the index. */
const inParts = (text) => text.startsWith('[{"run":');

/** The Report of a text in parts: the index line, the Report with marked node lists, then the lists; yields between parts. */
function* readParts(text) {
  const lines = text.split("\n");
  const index = JSON.parse(lines[0]);
  const data = JSON.parse(lines[1]);
  let line = 2;
  for (const { run, graph, parts } of index) {
    const nodes = [];
    for (let k = 0; k < parts; k++) {
      yield;
      for (const node of JSON.parse(lines[line++])) nodes.push(node);
    }
    data.runs[run].graphs[graph].nodes = nodes;
  }
  if (line !== lines.length) throw new Error(`${lines.length - line} parts more than its index names`);
  return data;
}

const notJson = (e) => ({
  ok: false,
  error: `The Report is not valid JSON (${e && e.message ? e.message : e}). The file may be truncated or corrupted.`,
});

/** Check an already-parsed Report object. */
export function checkReport(data) {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, error: "This is not an nstviz Report: the JSON is not an object." };
  }
  const v = data.schema_version;
  if (!Number.isInteger(v)) {
    return { ok: false, error: "This is not an nstviz Report: it has no integer schema_version." };
  }
  if (v > SUPPORTED_SCHEMA) {
    return {
      ok: false,
      error: `This Report has schema_version ${v}, newer than this viewer understands (${SUPPORTED_SCHEMA}). Upgrade nstviz (pip install -U nstviz) to view it.`,
    };
  }
  if (v < 1) return { ok: false, error: `Unknown Report schema_version ${v}.` };
  if (v < SUPPORTED_SCHEMA) {
    return {
      ok: false,
      error: `This Report has schema_version ${v}, older than this viewer reads (${SUPPORTED_SCHEMA}). Open it with this nstviz (nstviz view FILE, or nstviz.Report.load_json in Python), which upgrades it.`,
    };
  }
  const problem = structureProblem(data);
  if (problem) return { ok: false, error: `The Report is malformed: ${problem}.` };
  return { ok: true, report: data, index: new ReportIndex(data) };
}

function isObj(x) {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/** Shallow structural check of what the viewer relies on; returns a message or null. */
function structureProblem(r) {
  if (!isObj(r.runs)) return "'runs' is missing or not an object";
  if (!isObj(r.runs.baseline)) return "'runs.baseline' is missing";
  for (const [name, run] of Object.entries(r.runs)) {
    if (!isObj(run)) return `run '${name}' is not an object`;
    if (run.timing != null && !isObj(run.timing)) return `run '${name}'.timing is not an object`;
    for (const key of ["graphs", "breaks", "regions"]) {
      if (run[key] != null && !Array.isArray(run[key])) return `runs.${name}.${key} is not a list`;
    }
    for (const [gi, g] of (run.graphs || []).entries()) {
      if (!isObj(g) || typeof g.id !== "string") return `runs.${name}.graphs[${gi}] has no string id`;
      if (!Array.isArray(g.nodes)) return `runs.${name}.graphs[${gi}].nodes is not a list`;
      for (let i = 0; i < g.nodes.length; i++) {
        const n = g.nodes[i];
        if (!isObj(n) || typeof n.name !== "string" || typeof n.op !== "string") {
          return `runs.${name}.graphs[${gi}].nodes[${i}] is not a node (needs name and op)`;
        }
        if (n.inputs != null && !Array.isArray(n.inputs)) return `runs.${name}.graphs[${gi}].nodes[${i}].inputs is not a list`;
      }
    }
    for (const [bi, b] of (run.breaks || []).entries()) {
      if (!isObj(b) || typeof b.reason !== "string") return `runs.${name}.breaks[${bi}] has no reason`;
      if (typeof b.id !== "string") return `runs.${name}.breaks[${bi}] has no string id`;
    }
  }
  if (r.stacks != null && !Array.isArray(r.stacks)) return "'stacks' is not a list";
  if (!isObj(r.headline) || !Array.isArray(r.headline.chips)) return "'headline' is missing or has no chips";
  for (const [ci, c] of r.headline.chips.entries()) {
    if (!isObj(c) || typeof c.text !== "string" || typeof c.tone !== "string") return `headline.chips[${ci}] needs text and tone`;
  }
  if (!isObj(r.counts)) return "'counts' is missing or not an object";
  if (r.sources != null && !isObj(r.sources)) return "'sources' is not an object";
  return null;
}

/** Identity of a break for matching against report.diff: the id the Report gives it. */
export function breakKey(b) {
  return b.id;
}

/** Lookup helpers over a checked Report (read-only). */
export class ReportIndex {
  constructor(report) {
    this.report = report;
    const names = Object.keys(report.runs);
    const rank = (n) => (n === "baseline" ? 0 : n === "nonstrict" ? 1 : 2);
    this.runNames = names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b, undefined, { numeric: true }));
    const diff = report.diff || {};
    this._status = new Map();
    for (const status of ["resolved", "remaining", "introduced"]) {
      for (const b of diff[status] || []) this._status.set(breakKey(b), status);
    }
    this._graphs = new Map();
    for (const run of this.runNames) {
      for (const g of report.runs[run].graphs || []) this._graphs.set(`${run}\u0000${g.id}`, g);
    }
  }

  run(name) {
    return this.report.runs[name];
  }

  graph(run, id) {
    const key = `${run}\u0000${id}`;
    let g = this._graphs.get(key);
    if (!g && this.derive) {
      // a graph the viewer derives from the Report's (a run's fragments stacked): made once, on first use
      g = this.derive(run, id);
      if (g) this._graphs.set(key, g);
    }
    return g || null;
  }

  graphs(run) {
    return (this.report.runs[run] && this.report.runs[run].graphs) || [];
  }

  /** Levels present in a run, in display order. */
  levels(run) {
    const have = new Set(this.graphs(run).map((g) => g.level));
    const known = LEVELS.map((l) => l[0]).filter((l) => have.has(l));
    return known.concat([...have].filter((l) => !LEVEL_NAMES[l]));
  }

  /**
   * Status of break `b` of run `run`: "resolved" | "remaining" | "introduced" | null.
   * Without a nonstrict run (a baseline-only report) there is nothing to diff with: null, and
   * the break shows as it is ("break" or "fatal"), as the CLI's table lists it.
   */
  breakStatus(run, b) {
    if (!this.report.runs.nonstrict) return null;
    const s = this._status.get(breakKey(b));
    if (s) {
      if (run === "baseline" && s === "introduced") return null;
      if (run !== "baseline" && s === "resolved") return null;
      return s;
    }
    return null;
  }

  /** The user stack (list of Location) that stack index `i` refers to. */
  stack(i) {
    if (i == null || !Array.isArray(this.report.stacks)) return [];
    return this.report.stacks[i] || [];
  }

  /** Innermost frame of a stack index, or null. */
  frame(i) {
    const s = this.stack(i);
    return s.length ? s[s.length - 1] : null;
  }

  source(path) {
    const src = this.report.sources && this.report.sources[path];
    return src && typeof src.text === "string" ? src : null;
  }

  /** Default graph to show: the first ATen graph of the nonstrict run, else baseline, else any. */
  defaultView() {
    const prefer = ["aten_forward", "aten_inference", "dynamo", "aten_backward", "inductor_post_grad"];
    for (const run of ["nonstrict", "baseline", ...this.runNames]) {
      const gs = this.graphs(run);
      for (const lvl of prefer) {
        const g = gs.find((x) => x.level === lvl && x.nodes.length);
        if (g) return { run, graph: g.id };
      }
      if (gs.length) return { run, graph: gs[0].id };
    }
    return { run: this.runNames[0], graph: null };
  }

  /** Graph "counterpart" in another run: same level and position among that level's graphs. */
  counterpart(run, graphId, otherRun) {
    const g = this.graph(run, graphId);
    if (!g) return null;
    const same = this.graphs(run).filter((x) => x.level === g.level);
    const pos = same.indexOf(g);
    const other = this.graphs(otherRun).filter((x) => x.level === g.level);
    if (!other.length) return null;
    return other[Math.min(pos, other.length - 1)].id;
  }
}
