"""Static text and HTML summaries of a Report, for front ends that cannot show the widget.

GitHub, nbviewer and ``nbconvert --to html`` render a notebook's ``text/html`` output but not
widgets; the widget's display bundle carries these summaries next to the widget view so those
renderers show the headline numbers instead of nothing. Every user-derived string is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from nstviz._where import where
from nstviz.report import Break, Report, RunCounts

_RUN_LABELS = {"baseline": "baseline (as written)", "nonstrict": "nonstrict"}


def run_counts(report: Report, name: str) -> RunCounts | None:
    """Return the headline numbers of run ``name``: from ``report.counts``, else computed."""
    counts = report.counts.get(name)
    if counts is not None:
        return counts
    run = report.runs.get(name)
    if run is None:
        return None
    from nstviz.analysis.counts import run_counts as count_run

    return count_run(run)


def _outputs_text(report: Report) -> str:
    out = report.outputs
    if out.skipped_reason:
        return f"outputs not checked ({out.skipped_reason})"
    if out.match is None:
        return "outputs not compared"
    if out.match:
        return "outputs match"
    diff = f" (max abs diff {out.max_abs_diff:.3g})" if out.max_abs_diff is not None else ""
    return f"outputs DIFFER{diff}"


def headline(report: Report) -> str:
    """One line such as ``"3 breaks -> 0, 4 graphs -> 1, outputs match"``."""
    base = run_counts(report, "baseline")
    nst = run_counts(report, "nonstrict")
    if base is None:
        return "no runs captured"
    if nst is None:
        return f"{base.breaks} breaks, {base.graphs} graphs (no nonstrict run)"
    return (
        f"{_plural(base.breaks, 'break')} -> {nst.breaks}, "
        f"{_plural(base.graphs, 'graph')} -> {nst.graphs}, {_outputs_text(report)}"
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _errors(report: Report) -> list[tuple[str, str]]:
    return [(name, run.error) for name, run in report.runs.items() if run.error]


def text_summary(report: Report) -> str:
    """A short plain-text summary (used as the widget's ``text/plain``)."""
    summary = getattr(report, "summary", None)
    if callable(summary):
        try:
            return str(summary())
        except Exception:  # a renderer must not fail on a summary
            pass
    lines = [f"nstviz: {report.title or 'report'} - {headline(report)}"]
    for name in report.runs:
        c = run_counts(report, name)
        if c is not None:
            lines.append(
                f"  {name:<10} graphs {c.graphs:>3}  breaks {c.breaks:>3}  ops {c.ops:>5}  "
                f"aten ops {c.aten_ops:>5}  regions {c.regions:>3}"
            )
    for name, error in _errors(report):
        lines.append(f"  {name} raised: {error}")
    return "\n".join(lines)


def html_summary(report: Report) -> str:
    """A small self-contained HTML table of the headline numbers; every string is escaped."""
    esc = html.escape
    rows = []
    for name in report.runs:
        c = run_counts(report, name)
        if c is None:
            continue
        rows.append(
            "<tr>"
            f"<td>{esc(_RUN_LABELS.get(name, name))}</td><td>{c.graphs}</td><td>{c.breaks}</td>"
            f"<td>{c.break_hits}</td><td>{c.ops}</td><td>{c.aten_ops}</td><td>{c.regions}</td>"
            f"<td>{'yes' if c.full_graph else 'no'}</td>"
            "</tr>"
        )
    breaks = []
    groups: list[tuple[str, tuple[Break, ...]]] = [
        ("resolved", report.diff.resolved),
        ("remaining", report.diff.remaining),
        ("introduced", report.diff.introduced),
    ]
    if not any(items for _, items in groups):  # no diff (one run only): list each run's breaks
        groups = [(f"{name}:", run.breaks) for name, run in report.runs.items()]
    for status, items in groups:
        for b in items:
            loc = b.location
            breaks.append(
                f"<li><b>{esc(status)}</b> {esc(b.gb_id or '')} {esc(b.reason)} "
                f"<code>{esc(where(loc.file, loc.line))}</code> in <code>{esc(loc.function)}</code>"
                f"{f' (x{b.count})' if b.count > 1 else ''}</li>"
            )
    errors = "".join(
        f"<p><b>{esc(name)}</b> raised <code>{esc(err)}</code></p>" for name, err in _errors(report)
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    return (
        '<div class="nstviz-static-summary">'
        f"<p><b>nstviz</b>: {esc(report.title or 'report')} &mdash; {esc(headline(report))}</p>"
        "<table><thead><tr><th>run</th><th>graphs</th><th>distinct breaks</th><th>break hits</th>"
        "<th>ops</th><th>aten ops</th><th>regions</th><th>one graph</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        + (f"<ul>{''.join(breaks)}</ul>" if breaks else "")
        + errors
        + (f"<ul>{notes}</ul>" if notes else "")
        + "<p><i>Static summary: open the notebook in JupyterLab or Notebook 7 with nstviz installed "
        "for the interactive view.</i></p></div>"
    )


def progress_text(progress: Mapping[str, Any]) -> str:
    """Plain text for a progress dict (``{"phase", "message", "elapsed_s", ...}``)."""
    phase = str(progress.get("phase", "starting"))
    message = str(progress.get("message", ""))
    elapsed = progress.get("elapsed_s")
    when = f" ({elapsed:.1f} s)" if isinstance(elapsed, (int, float)) else ""
    return f"nstviz: {phase}{': ' + message if message else ''}{when}"


def progress_html(progress: Mapping[str, Any]) -> str:
    """Escaped HTML for a progress dict."""
    return f'<div class="nstviz-static-summary"><p>{html.escape(progress_text(progress))}</p></div>'


def printed_output_html(report: Report) -> str | None:
    """A collapsed, escaped block with what each run printed, or None when nothing was printed."""
    parts = []
    for name, run in report.runs.items():
        text = run.stdout + (
            ("\n" if run.stdout and not run.stdout.endswith("\n") else "") + run.stderr if run.stderr else ""
        )
        if text.strip():
            lines = text.count("\n") + (0 if text.endswith("\n") else 1)
            parts.append(
                f"<details><summary>{html.escape(name)} ({lines} line{'s' if lines != 1 else ''})</summary>"
                f'<pre style="max-height: 20em; overflow: auto; margin: 0">{html.escape(text)}</pre></details>'
            )
    if not parts:
        return None
    return (
        '<div class="nstviz-printed"><div><b>Printed output</b> of each run (nstviz ran the cell '
        f"{len(report.runs)} times; shown here instead of the cell output)</div>{''.join(parts)}</div>"
    )
