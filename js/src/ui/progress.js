// ui/progress.js — text of the progress screen shown while a capture runs.
// Owns: turning the widget's `progress` dict ({phase, message, runs_done, runs_total, elapsed_s})
// into a title, a tone and whether the clock should keep ticking.
// Must not: touch the DOM or keep timers (ui/app.js owns the screen and its interval).

const TERMINAL = new Set(["done", "error", "interrupted"]);

/**
 * @param {{phase?: string}} p
 * @returns {{title: string, tone: "running"|"done"|"error"|"interrupted"|"waiting", ticking: boolean}}
 */
export function progressView(p) {
  const phase = (p && p.phase) || "";
  if (!phase) return { title: "Waiting for the capture to start…", tone: "waiting", ticking: false };
  if (phase === "error") return { title: "Failed", tone: "error", ticking: false };
  if (phase === "interrupted") return { title: "Interrupted", tone: "interrupted", ticking: false };
  if (phase === "done") return { title: "Done: preparing the report…", tone: "done", ticking: false };
  if (phase === "starting") return { title: "Starting…", tone: "running", ticking: true };
  return { title: `Running: ${phase}`, tone: "running", ticking: !TERMINAL.has(phase) };
}

/** "2 of 3 runs · 4.2 s" (either part may be missing). */
export function progressStatus(p, elapsed) {
  const done = (p && p.runs_done) || 0, total = (p && p.runs_total) || 0;
  const parts = [];
  if (total) parts.push(`${done} of ${total} runs`);
  if (elapsed != null && Number.isFinite(Number(elapsed))) parts.push(`${Number(elapsed).toFixed(1)} s`);
  return parts.join(" · ");
}
