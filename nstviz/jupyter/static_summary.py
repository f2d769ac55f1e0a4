"""Static text and HTML summaries of a Report, for front ends that cannot show the widget.

GitHub, nbviewer and ``nbconvert --to html`` render a notebook's ``text/html`` output but not
widgets; the widget's display bundle carries these summaries next to the widget view so those
renderers show the headline numbers instead of nothing. Every user-derived string is escaped. The
headline and the numbers are the Report's own (:attr:`Report.headline`, :attr:`Report.counts`).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from nstviz._where import where
from nstviz.report import Break, Report
from nstviz.report.facts import rank_breaks, short_counts

_RUN_LABELS = {"baseline": "baseline (as written)", "nonstrict": "nonstrict"}


def headline(report: Report) -> str:
    """The headline as one line (:attr:`Report.headline`, computed at capture)."""
    return report.headline.text


def _errors(report: Report) -> list[tuple[str, str]]:
    return [(name, run.error) for name, run in report.runs.items() if run.error]


def text_summary(report: Report) -> str:
    """A short plain-text summary (used as the widget's ``text/plain``): :meth:`Report.summary`."""
    return report.summary()


def html_summary(report: Report) -> str:
    """A small self-contained HTML table of the headline numbers; every string is escaped."""
    esc = html.escape
    rows = []
    for name in report.runs:
        c = report.counts[name]
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
        for b in rank_breaks(items):
            loc = b.location
            breaks.append(
                f"<li><b>{esc(status)}</b> {esc(b.gb_id or '')} {esc(b.reason)} "
                f"<code>{esc(where(loc.file, loc.line))}</code> in <code>{esc(loc.function)}</code>"
                f" ({esc(short_counts(b))})</li>"
            )
    errors = "".join(
        f"<p><b>{esc(name)}</b> raised <code>{esc(err)}</code></p>" for name, err in _errors(report)
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    timings = "".join(
        f"<li><b>{esc(name)}</b> {esc(run.timing.text)}</li>" for name, run in report.runs.items() if run.timing
    )
    return (
        '<div class="nstviz-static-summary">'
        f"<p><b>nstviz</b>: {esc(report.title or 'report')} &mdash; {esc(headline(report))}</p>"
        "<table><thead><tr><th>run</th><th>graphs</th><th>distinct breaks</th><th>break hits</th>"
        "<th>ops</th><th>aten ops</th><th>regions</th><th>one graph</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        + (f"<ul>{''.join(breaks)}</ul>" if breaks else "")
        + (f"<p>timing:</p><ul>{timings}</ul>" if timings else "")
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
