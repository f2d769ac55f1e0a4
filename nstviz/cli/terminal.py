"""What the ``nstviz`` command prints: progress, the summary table, why a check failed.

Also how a Report maps to the script-raised exit status (:func:`status_code`), and a writer
that never fails on strings from the Report (:class:`SafeText`).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from nstviz._progress import progress_event
from nstviz._text import shorten
from nstviz._where import where as format_where
from nstviz.cli.script import EXIT_OK, EXIT_SCRIPT_RAISED
from nstviz.passes.checks import raised_by_user
from nstviz.render.attempts import recommendation_effect
from nstviz.report.facts import rank_breaks, ranked_breaks, short_counts

if TYPE_CHECKING:
    from nstviz.report import Report


class Progress:
    """Shows which run is going on and for how long, on the real stderr.

    On a terminal it keeps one line up to date (a ticker thread refreshes the elapsed
    time); elsewhere it prints one line per phase. ``quiet`` silences it.
    """

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        # Keep the stream now: the capture swaps sys.stderr while the user's code runs.
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.message = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, event: Any = None, message: str | None = None, **fields: Any) -> None:
        """Accept a progress event: a dict, an object with ``phase``/``message``, or (phase, message)."""
        args = (event,) if message is None else (event, message)
        fields = progress_event(args if event is not None else (), fields)
        phase = str(fields.get("phase") or "")
        text = str(fields.get("message") or "")
        label = _phase_label(phase)
        self.update(f"{label}: {text}" if text and label else (label or text))

    def update(self, message: str) -> None:
        """Show ``message`` as the current step."""
        if self.quiet or not message:
            return
        with self._lock:
            self.message = message
            if self.tty:
                self._draw()
            else:
                self.stream.write(f"nstviz: {message} [{self.elapsed():.1f} s]\n")
                self.stream.flush()

    def elapsed(self) -> float:
        """Seconds since this display was made."""
        return time.monotonic() - self.start

    def _draw(self) -> None:
        line = f"nstviz: {self.message} [{self.elapsed():.0f} s]"
        self.stream.write("\r\033[K" + line[:200])
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                if self.message:
                    self._draw()

    def __enter__(self) -> Progress:
        if self.tty and not self.quiet:
            self._thread = threading.Thread(target=self._tick, name="nstviz-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.tty and not self.quiet and self.message:
            with self._lock:
                self.stream.write("\r\033[K")
                self.stream.flush()


def _phase_label(phase: str) -> str:
    if phase == "baseline":
        return "baseline run (code as written)"
    if phase == "nonstrict":
        return "nonstrict run"
    if phase.startswith("attempt-"):
        return f"advisor {phase.replace('-', ' ')}"
    return {"done": "done", "error": "error", "analysis": "analysing"}.get(phase, phase)


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def summary_table(report: Report) -> str:
    """Return the runs side by side as a plain-text table, then the breaks and outputs.

    "graph breaks" is Dynamo's own counter (``counters["graph_break"]``); "breaks reached" the
    times Dynamo's tracing reached a break (tlparse's graph-break entries). Breaks are listed
    most graph breaks caused first. Timed runs (``--time``) get one line each (:attr:`RunTiming.text`).
    """
    names = [n for n in ("baseline", "nonstrict") if n in report.runs]
    names += [n for n in report.runs if n not in names and not n.startswith("attempt-")]
    lines = [report.headline.text, *_count_rows(report, names), *_break_lines(report), _outputs_line(report)]
    timed = [(n, r.timing) for n, r in report.runs.items() if r.timing is not None]
    width = max((len(n) for n, _ in timed), default=0)
    lines.extend(f"timing {n.ljust(width)}  {t.text}" for n, t in timed)
    warnings, shown = _mark_warnings(report, names)
    lines.extend(warnings)
    lines.extend(_advisor_lines(report))
    lines.extend(f"note: {note}" for note in report.notes if note not in shown)
    return "\n".join(lines)


def _count_rows(report: Report, names: list[str]) -> list[str]:
    """The counts of the runs ``names``, a column each, under a header row of their names."""
    counts = {n: report.counts[n] for n in names}
    rows: list[tuple[str, list[str]]] = [
        ("graphs", [str(counts[n].graphs) for n in names]),
        ("distinct breaks", [str(counts[n].breaks) for n in names]),
        ("graph breaks", ["?" if counts[n].graph_breaks is None else str(counts[n].graph_breaks) for n in names]),
        ("breaks reached", [str(counts[n].break_hits) for n in names]),
        ("ops (Dynamo)", [str(counts[n].ops) for n in names]),
        ("ops (ATen)", [str(counts[n].aten_ops) for n in names]),
        ("non-strict regions", [str(counts[n].regions) for n in names]),
        ("single graph", [_yes(counts[n].full_graph) for n in names]),
        ("error", [shorten(report.runs[n].error_type or report.runs[n].error or "-", 24) for n in names]),
    ]
    width0 = max(len(r[0]) for r in rows)
    widths = [max(len(n), *(len(r[1][i]) for r in rows)) for i, n in enumerate(names)]
    lines = ["  ".join([" " * width0, *(n.rjust(w) for n, w in zip(names, widths, strict=True))])]
    for label, cells in rows:
        lines.append(
            "  ".join([label.ljust(width0), *(c.rjust(w) for c, w in zip(cells, widths, strict=True))])
        )
    return lines


def _break_lines(report: Report) -> list[str]:
    """The breaks, most graph breaks caused first: by status against the nonstrict run, else the baseline's."""
    lines: list[str] = []
    diff = report.diff
    if "nonstrict" in report.runs:
        lines.append("")
        lines.append(
            f"breaks: {len(diff.resolved)} resolved, {len(diff.remaining)} remaining, {len(diff.introduced)} introduced"
        )
        for status, breaks in (
            ("resolved", diff.resolved),
            ("remaining", diff.remaining),
            ("introduced", diff.introduced),
        ):
            for b in rank_breaks(breaks):  # most graph breaks caused first
                loc = b.location
                where = f"{format_where(loc.file, loc.line, _short_path)} {loc.function}"
                seen = f" ({short_counts(b)})"
                fatal = " [fatal]" if b.fatal else ""
                lines.append(
                    f"  {status:<10} {b.gb_id or '-':<7} {where}  {shorten(b.reason, 70)}{seen}{fatal}"
                )
                if b.advice and status != "resolved":
                    lines.append(f"    what else: {b.advice}")
    else:
        for b in ranked_breaks(report.runs["baseline"]) if "baseline" in report.runs else ():
            loc = b.location
            lines.append(
                f"  break {b.gb_id or '-':<7} {format_where(loc.file, loc.line, _short_path)} {shorten(b.reason, 70)}"
                f" ({short_counts(b)})"
            )
            if b.advice:
                lines.append(f"    what else: {b.advice}")
    return lines


def _mark_warnings(report: Report, names: list[str]) -> tuple[list[str], set[str]]:
    """The warning lines of the marks in the runs ``names``, and the mark warnings shown (each once)."""
    lines: list[str] = []
    shown: set[str] = set()
    for name in names:
        for mark in report.runs[name].marked:
            if mark.warning and mark.warning not in shown:
                shown.add(mark.warning)
                lines.append(f"warning: {mark.warning}")
            elif not mark.applied and not mark.warning:
                lines.append(
                    f"warning: --nonstrict {mark.spec} ({mark.qualname}) never applied in the {name} run"
                )
    return lines, shown


def _advisor_lines(report: Report) -> list[str]:
    """The advisor's attempts, one line each, then its recommendation and the code to apply it."""
    if not report.candidates and report.recommendation is None:
        return []
    lines = ["", "advisor:"]
    for c in report.candidates:
        breaks = f"breaks {c.breaks_before} -> {c.breaks_after}" if c.breaks_after is not None else ""
        outputs = {True: "outputs match", False: "outputs DIFFER", None: ""}[c.outputs_match]
        why_not = c.error or "; ".join(c.precheck)
        facts = ", ".join(
            x for x in (breaks, outputs, (c.gb_id or ""), shorten(why_not, 90) if why_not else "") if x
        )
        lines.append(
            f"  {c.status:<9} {c.function}" + (f": {facts}" if facts else "") + f"  ({shorten(c.why, 70)})"
        )
    rec = report.recommendation
    if rec is None:
        lines.append("  no recommendation: no candidate reduced the breaks with matching outputs")
    else:
        lines.append(
            f"  recommended: {', '.join([*rec.functions, *(f'config {f}=True' for f in rec.config)])} "
            f"({recommendation_effect(rec)})"
        )
        lines.extend(("    " + line).rstrip() for line in rec.code.rstrip().splitlines())
    return lines


def _outputs_line(report: Report) -> str:
    """The Report's output verdict (its headline chip, as is), then the values that differ."""
    out = report.outputs
    verdict = next((c.text for c in report.headline.chips if c.kind == "outputs"), "outputs not checked")
    line = verdict
    if out.nondeterministic:
        line += " [non-deterministic: the baseline disagreed with itself]"
    bad = [d for d in out.details if d.match is False]
    for detail in bad[:5]:
        why = detail.note or (
            f"max abs diff {detail.max_abs_diff:.3g}" if detail.max_abs_diff is not None else ""
        )
        line += f"\n  {shorten(detail.path, 40)}: {shorten(why, 100)}"
    if len(bad) > 5:
        line += f"\n  ... and {len(bad) - 5} more"
    return line


def _short_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def file_url(path: Path) -> str:
    """A ``file://`` URL for ``path``, for terminals that make links of them."""
    return path.resolve().as_uri()


def status_code(report: Report) -> int:
    """3 when the baseline raised something other than a graph break, else 0."""
    baseline = report.runs.get("baseline")
    return EXIT_SCRIPT_RAISED if baseline is not None and raised_by_user(baseline) else EXIT_OK


def script_error_lines(report: Report) -> list[str]:
    """The lines that tell what the user's script raised, if it raised."""
    lines = []
    for name, run in report.runs.items():
        if raised_by_user(run):
            lines.append(f"error: the script raised in the {name} run: {shorten(run.error or '', 160)}")
    return lines


class SafeText:
    """Wraps a text stream so that no string the Report holds can make a write fail.

    Lone surrogates (from exception messages) become U+FFFD; characters the stream's
    encoding lacks (an ASCII terminal) become backslash escapes.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text``, replacing what the stream's encoding cannot hold."""
        text = _LONE_SURROGATE.sub("\ufffd", text)
        try:
            return self._stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            return self._stream.write(text.encode(encoding, "backslashreplace").decode(encoding))

    def flush(self) -> None:
        """Flush the wrapped stream."""
        self._stream.flush()

    def isatty(self) -> bool:
        """Whether the wrapped stream is a terminal."""
        return bool(getattr(self._stream, "isatty", lambda: False)())


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


__all__ = [
    "Progress",
    "SafeText",
    "file_url",
    "script_error_lines",
    "shorten",
    "status_code",
    "summary_table",
]
