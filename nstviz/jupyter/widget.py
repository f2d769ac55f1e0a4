"""The ``Viewer`` widget: the nstviz viewer bundle in a notebook, with state usable from Python.

The widget is a thin anywidget host. Everything it shows comes from the Report JSON in the
``report_json`` trait (so a notebook saved with widget state reopens showing the view); the
other traits carry progress and the two-way UI state of the contract in
``docs/architecture.md``:

- ``progress`` (Python -> JS): ``{"phase", "message", "elapsed_s", "runs_done", "runs_total"}``
- ``selected_node`` / ``selected_break`` / ``view`` (both ways)
- ``standalone`` (always False here; True only in the HTML file)

Custom messages: the viewer sends ``{"type": "export_html"}`` and gets back
``{"type": "export_done", "path": ...}`` or ``{"type": "export_failed", "message": ...}``.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import time
import weakref
from collections.abc import Mapping
from typing import Any

import anywidget
import traitlets

from nstviz.errors import UsageError
from nstviz.jupyter import static_summary as _summary
from nstviz.report import Report

_STATIC = pathlib.Path(__file__).resolve().parent.parent / "static"

# Shown only when the viewer bundle was not built (a source checkout without `node js/build.mjs`).
_FALLBACK_ESM = """
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "nstviz-fallback";
  box.style.cssText = "font-family: var(--jp-ui-font-family, sans-serif); padding: 6px;";
  const update = () => {
    const p = model.get("progress") || {};
    const has = (model.get("report_json") || "").length > 0;
    box.textContent = "nstviz: the viewer bundle is not built (run `cd js && npm ci && node build.mjs`). "
      + (has ? "The report is ready; see the text summary." : `${p.phase || "starting"}: ${p.message || ""}`);
  };
  model.on("change:progress", update);
  model.on("change:report_json", update);
  update();
  el.appendChild(box);
  return () => { model.off("change:progress", update); model.off("change:report_json", update); };
}
export default { render };
"""


# The most recently parsed (JSON text, Report) pair, shared by all viewers: a kernel may hold many
# viewers, each keeps only its JSON text, and the parsed form of just one stays in memory.
_PARSED: list[tuple[str, Report]] = []


def _asset(name: str, fallback: str) -> pathlib.Path | str:
    path = _STATIC / name
    return path if path.is_file() else fallback


def viewer_shows_printed_output() -> bool:
    """Whether the viewer bundle renders each run's ``stdout``/``stderr`` itself."""
    path = _STATIC / "viewer.js"
    try:
        return "stdout" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _slug(text: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return slug[:60] or "report"


class Viewer(anywidget.AnyWidget):
    """Interactive view of a :class:`~nstviz.report.Report`: breaks, graphs, non-strict regions.

    Example::

        w = Viewer(report)       # or displayed for you by %%nstrace
        w                        # show it
        w.selected_node          # {"run": "nonstrict", "graph": "0/0:aten_forward", "node": "sin"}
        w.select(node="sin")     # drive the view from Python

    Args:
        report: The Report to show (a :class:`Report`, its JSON text or dict), or None to
            show progress until :attr:`report` is set.
        html_path: Where the export button writes the standalone HTML file; by default
            ``<slug of the title>.html`` in the current directory.
    """

    _esm = _asset("viewer.js", _FALLBACK_ESM)
    _css = _asset("viewer.css", "")

    report_json = traitlets.Unicode("").tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    selected_node = traitlets.Dict().tag(sync=True)
    selected_break = traitlets.Dict().tag(sync=True)
    view = traitlets.Dict().tag(sync=True)
    standalone = traitlets.Bool(False).tag(sync=True)

    def __init__(
        self,
        report: Report | str | Mapping[str, Any] | None = None,
        *,
        html_path: str | pathlib.Path | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._report_ref: weakref.ref[Report] | None = None
        self._report_source = ""
        self._started = time.monotonic()
        self.html_path: str | pathlib.Path | None = html_path
        """Where :meth:`export_html` and the export button write by default."""
        self.last_export: str | None = None
        """Path of the last HTML file written by the export button or :meth:`export_html`."""
        if report is not None:
            self.report = report
        self.on_msg(self._on_custom_msg)

    # -- the Report ---------------------------------------------------------------------

    @property
    def report(self) -> Report | None:
        """The Report shown (None while the runs are in progress)."""
        text = self.report_json
        if not text:
            return None
        report = self._report_ref() if self._report_ref is not None else None
        if report is not None and self._report_source == text:
            return report
        for cached_text, cached in _PARSED:
            if cached_text is text:
                return cached
        report = Report.from_json(text)
        _PARSED[:] = [(text, report)]
        return report

    @report.setter
    def report(self, value: Report | str | Mapping[str, Any] | None) -> None:
        if value is None:
            self._report_ref, self._report_source = None, ""
            self.report_json = ""
            return
        if isinstance(value, Report):
            # Keep no live exception (its traceback pins the user's frames and tensors): a copy
            # of the Report has none attached.
            report = dataclasses.replace(value) if value.user_exception is not None else value
        elif isinstance(value, (str, bytes)):
            report = Report.from_json(value)
        elif isinstance(value, Mapping):
            report = Report.from_dict(dict(value))
        else:
            raise UsageError(
                f"Viewer.report takes a nstviz Report (or its JSON), not {type(value).__name__}; "
                "build one with nstviz.trace_code(...) or nstviz.compare(...)"
            )
        text = report.to_json()
        # Held weakly: a displayed widget lives as long as the kernel (ipywidgets keeps it), and
        # must not keep the live Report (and the user's exception, its frames) alive with it.
        self._report_ref, self._report_source = weakref.ref(report), text
        self.report_json = text
        runs_total = len(report.runs)
        self.progress = {
            "phase": "done",
            "message": _summary.headline(report),
            "elapsed_s": round(report.elapsed_s or (time.monotonic() - self._started), 3),
            "runs_done": runs_total,
            "runs_total": runs_total,
        }

    # -- progress (pushed by the magic while the runs go on) ------------------------------

    def start_progress(self, runs_total: int, message: str = "starting") -> None:
        """Reset the clock and show that the capture has started."""
        self._started = time.monotonic()
        self.set_progress("starting", message, runs_done=0, runs_total=runs_total)

    def set_progress(
        self, phase: str, message: str = "", *, runs_done: int | None = None, runs_total: int | None = None
    ) -> None:
        """Publish one progress update (sent to the front end at once, also mid-cell)."""
        current = dict(self.progress)
        self.progress = {
            "phase": phase,
            "message": message,
            "elapsed_s": round(time.monotonic() - self._started, 3),
            "runs_done": current.get("runs_done", 0) if runs_done is None else runs_done,
            "runs_total": current.get("runs_total", 2) if runs_total is None else runs_total,
        }

    # -- two-way UI state -----------------------------------------------------------------

    def select(
        self,
        node: str | None = None,
        *,
        break_: int | str | None = None,
        run: str | None = None,
        graph: str | None = None,
    ) -> None:
        """Select a node and/or a break in the view, as a click would.

        Args:
            node: Node name (``"sin"``). Searched in ``graph`` if given, else in every graph of
                ``run`` (the nonstrict run, then the baseline, if ``run`` is not given).
            break_: Index into ``runs[run].breaks``, or a GB id / text found in the break's
                reason (``"GB0026"``, ``"magic"``).
            run: Run name (``"baseline"``, ``"nonstrict"``, ``"attempt-1"``...).
            graph: Graph id (``"0/0:aten_forward"``); also sets the view to that graph.

        Raises:
            UsageError: no report yet, or the run, graph, node or break is not in the report.
        """
        report = self.report
        if report is None:
            raise UsageError("nothing to select yet: the report is not ready (the runs are still going)")
        if run is not None and run not in report.runs:
            raise UsageError(f"no run named {run!r} in this report; runs: {', '.join(report.runs)}")
        if node is not None:
            self.selected_node = self._find_node(report, node, run, graph)
            self.view = {**self.view, "run": self.selected_node["run"], "graph": self.selected_node["graph"]}
        elif graph is not None:
            run_name = run or self._run_of_graph(report, graph)
            self.view = {**self.view, "run": run_name, "graph": graph}
        if break_ is not None:
            self.selected_break = self._find_break(report, break_, run)

    @staticmethod
    def _run_of_graph(report: Report, graph: str) -> str:
        for name, r in report.runs.items():
            if any(g.id == graph for g in r.graphs):
                return name
        raise UsageError(f"no graph {graph!r} in this report")

    @staticmethod
    def _find_node(report: Report, node: str, run: str | None, graph: str | None) -> dict[str, str]:
        order = [run] if run else [n for n in ("nonstrict", "baseline") if n in report.runs]
        order += [] if run else [n for n in report.runs if n not in order]
        for run_name in order:
            for g in report.runs[run_name].graphs:
                if graph is not None and g.id != graph:
                    continue
                if any(n.name == node for n in g.nodes):
                    return {"run": run_name, "graph": g.id, "node": node}
        where = f"graph {graph!r}" if graph else f"run {run!r}" if run else "any graph"
        raise UsageError(f"no node named {node!r} in {where}; node names are as shown in the graph view")

    @staticmethod
    def _find_break(report: Report, which: int | str, run: str | None) -> dict[str, Any]:
        run_names = [run] if run else list(report.runs)
        if isinstance(which, int) and not isinstance(which, bool):
            run_name = run or "baseline"
            breaks = report.runs[run_name].breaks if run_name in report.runs else ()
            if not 0 <= which < len(breaks):
                raise UsageError(
                    f"run {run_name!r} has {len(breaks)} distinct breaks; index {which} is out of range"
                )
            return {"run": run_name, "index": which}
        needle = str(which).lower()
        for run_name in run_names:
            for i, b in enumerate(report.runs[run_name].breaks):
                if needle == (b.gb_id or "").lower() or needle in b.reason.lower():
                    return {"run": run_name, "index": i}
        raise UsageError(f"no break matching {which!r}; pass an index or a GB id such as 'GB0026'")

    # -- export -----------------------------------------------------------------------------

    def default_html_path(self) -> pathlib.Path:
        """The export button's target: :attr:`html_path` or ``<slug of the title>.html``."""
        if self.html_path is not None:
            return pathlib.Path(self.html_path)
        report = self.report
        return pathlib.Path(f"nstviz-{_slug(report.title if report else '')}.html")

    def export_html(self, path: str | pathlib.Path | None = None) -> str:
        """Write the standalone HTML report (same file as ``--html``) and return its path."""
        report = self.report
        if report is None:
            raise UsageError("nothing to export yet: the report is not ready")
        from nstviz.render.html import save_html  # the HTML helper's module; imported late

        target = pathlib.Path(path) if path is not None else self.default_html_path()
        written = save_html(report, target)
        self.last_export = str(written or target)
        return self.last_export

    def _on_custom_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "export_html":
            return
        try:
            path = self.export_html()
        except Exception as exc:  # reported to the front end, never raised in the kernel
            self.send({"type": "export_failed", "message": f"{type(exc).__name__}: {exc}"})
        else:
            self.send({"type": "export_done", "path": str(pathlib.Path(path).resolve())})

    # -- display ------------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data or {})
        report = self._safe_report()
        if report is not None:
            data["text/plain"] = _summary.text_summary(report)
            data["text/html"] = _summary.html_summary(report)
        else:
            data["text/plain"] = _summary.progress_text(self.progress)
            data["text/html"] = _summary.progress_html(self.progress)
        return data, metadata

    def _safe_report(self) -> Report | None:
        try:
            return self.report
        except Exception:  # a corrupt report must not break display
            return None

    def __repr__(self) -> str:
        report = self._safe_report()
        what = _summary.headline(report) if report is not None else str(self.progress.get("phase", "empty"))
        return f"<nstviz.Viewer {what}>"


__all__ = ["Viewer"]
