"""The :class:`Report`: the runs, their comparison and the output check (the parts: :mod:`nstviz.report.model`).

It imports the model, :mod:`nstviz.errors`, and the modules its methods call: the codec
(:mod:`nstviz.report._codec`) and the consistency checks (:mod:`nstviz.report.lint`), which name
:class:`Report` for type checkers only. :meth:`Report.summary` and :meth:`Report.save_html`
delegate to a renderer, lazily.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Literal

from nstviz.report import _codec, lint
from nstviz.report.model import (
    SCHEMA_VERSION,
    BreakDiff,
    Candidate,
    Finding,
    Headline,
    Location,
    OutputCheck,
    RankView,
    Recommendation,
    Run,
    RunCounts,
    SourceFile,
)

_FRZ = {"frozen": True, "slots": True, "kw_only": True}


@dataclass(**_FRZ, weakref_slot=True)  # weakly referable: widgets and tests hold Reports weakly
class Report:
    """What nstviz captured: the runs, their comparison and the output check.

    Build it with :func:`nstviz.compare` or :func:`nstviz.trace_code`; load a saved one with
    :meth:`Report.from_json`. ``runs`` always has ``"baseline"`` and, unless the nonstrict run
    could not be started, ``"nonstrict"``.
    """

    torch_version: str
    runs: dict[str, Run]
    schema_version: int = SCHEMA_VERSION
    nstviz_version: str = ""
    python_version: str = ""
    created: str = ""
    """ISO 8601 time the capture started."""
    title: str = ""
    entry: Literal["compare", "trace_code", "cli", "demo"] = "trace_code"
    backend: str = "record"
    nonstrict: tuple[str, ...] = ()
    """The functions requested, as given (names or qualified names)."""
    baseline_mode: Literal["as_written", "strict"] = "as_written"
    counts: dict[str, RunCounts]
    """Headline numbers per run (every run has an entry)."""
    headline: Headline
    """The chips every renderer shows first."""
    diff: BreakDiff = field(default_factory=BreakDiff)
    outputs: OutputCheck = field(default_factory=lambda: OutputCheck(match=None))
    candidates: tuple[Candidate, ...] = ()
    recommendation: Recommendation | None = None
    advisor_untried: str | None = None
    """When the advisor's time budget (``budget_s``) ran out: what it left untried, in one line
    (candidates, checks, timings not started); None when it ran out of nothing."""
    stacks: tuple[tuple[Location, ...], ...] = ()
    """Interned user stacks; ``Node.stack`` indexes this (outermost frame first)."""
    sources: dict[str, SourceFile] = field(default_factory=dict)
    """User source text by path, for the viewer's source pane."""
    notes: tuple[str, ...] = ()
    """Warnings for the user (a mark that never applied, truncated graphs, ...)."""
    elapsed_s: float = 0.0
    rank: int | None = None
    """Offline diffs: the rank whose runs are in :attr:`runs`; the others are in :attr:`ranks`."""
    ranks: tuple[RankView, ...] = ()
    findings: tuple[Finding, ...] = ()
    """Cross-rank findings of an offline diff (ranks that compiled differently)."""

    @property
    def user_exception(self) -> BaseException | None:
        """The exception the user's code raised in the last run, live, or None.

        It is not part of the Report's data: it is kept beside the Report (see
        :mod:`nstviz.report.document`) for the Report the capture returned, and a Report read from
        JSON or made by ``dataclasses.replace`` has None.
        """
        with _LIVE_LOCK:
            return _LIVE_EXCEPTIONS.get(id(self))

    def raise_user_error(self) -> None:
        """Re-raise the exception the user's code raised in the last run, if it raised one.

        The traceback is the original one, so a notebook shows it as a normal run would.
        Does nothing for a Report loaded from JSON or a run that succeeded.
        """
        exc = self.user_exception
        if exc is not None:
            raise exc.with_traceback(exc.__traceback__)

    # -- reading ---------------------------------------------------------------------------

    def summary(self) -> str:
        """A short plain-text summary of the runs and their comparison.

        The headline (``"3 breaks → 0, 4 graphs → 1, outputs match"``), then per run its
        graphs, breaks, ops, regions, and the output check.
        """
        from nstviz.render.summary import summary

        return summary(self)

    def validate(self) -> None:
        """Check internal consistency, like ``torch.fx.Graph.lint`` (:mod:`nstviz.report.lint`).

        Graph ids unique per run, node names unique per graph, node inputs and region nodes
        exist, stack indices in range, counts name existing runs.

        Raises:
            ReportFormatError: listing every problem found.
        """
        lint.validate(self)

    # -- serialisation (:mod:`nstviz.report._codec`) ---------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return the Report as JSON-native data (dicts, lists, str, int, float, bool, None)."""
        return _codec.to_dict(self)

    def to_json(self, *, indent: int | None = None) -> str:
        """Serialise to JSON text (see ``nstviz/schema/report.schema.json``)."""
        return _codec.to_json(self, indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> Report:
        """Build a Report from :meth:`to_dict` data.

        Version 1 data is upgraded: break ids, counts and the headline are computed.

        Raises:
            ReportFormatError: the data is not a Report, or from a newer schema version.
        """
        return _codec.from_dict(cls, data)

    @classmethod
    def from_json(cls, text: str | bytes) -> Report:
        """Parse JSON text produced by :meth:`to_json`.

        Raises:
            ReportFormatError: the text is not valid JSON or not a valid Report.
        """
        return _codec.from_json(cls, text)

    def save_json(self, path: str | Any) -> str:
        """Write :meth:`to_json` to ``path``; return the path written."""
        import pathlib

        target = pathlib.Path(path)
        target.write_text(self.to_json(), encoding="utf-8")
        return str(target)

    @classmethod
    def load_json(cls, path: str | Any) -> Report:
        """Read a Report saved by :meth:`save_json`."""
        import pathlib

        return cls.from_json(pathlib.Path(path).read_bytes())

    def save_html(self, path: str | Any, *, title: str | None = None) -> str:
        """Write a self-contained HTML page with the viewer (see :mod:`nstviz.render.html`); return its path."""
        from nstviz.render.html import save_html

        return str(save_html(self, path, title=title))


_LIVE_LOCK = threading.Lock()
_LIVE_EXCEPTIONS: dict[int, BaseException] = {}


def attach_user_exception(report: Report, exc: BaseException | None) -> Report:
    """Keep ``exc`` as the live exception of ``report`` (until the Report is collected); return the Report."""
    if exc is None:
        return report
    key = id(report)
    with _LIVE_LOCK:
        _LIVE_EXCEPTIONS[key] = exc
    weakref.finalize(report, _forget_user_exception, key)
    return report


def _forget_user_exception(key: int) -> None:
    with _LIVE_LOCK:
        _LIVE_EXCEPTIONS.pop(key, None)
