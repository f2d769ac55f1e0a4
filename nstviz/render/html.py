r"""Standalone HTML reports: one self-contained, offline, script-locked page per Report.

The page inlines the viewer bundle (``nstviz/static/standalone.js``), its stylesheet
(``nstviz/static/viewer.css``) and the Report JSON, so it opens from ``file://`` years later
with no network. Safety rules, each tested in ``tests/html/``:

- The Report is data, never markup: its JSON (``<``, ``>``, ``&``, U+2028, U+2029 and lone
  surrogates written as ``\uXXXX`` escapes, :func:`embed_json`) is gzip-compressed and written
  as base64 into ``<script type="application/gzip" id="nstviz-report"
  data-encoding="gzip+base64">``: the element holds only ``A-Z a-z 0-9 + / =``, so no user
  string can end it, open a comment or make the file invalid UTF-8 (and the page is about 20
  times smaller than with the JSON as text). The viewer and the JSON download decode it with the
  browser's own ``DecompressionStream``; :func:`extract_report_json` also reads pages that hold
  the JSON as text (``type="application/json"``, written before). A big Report is written in
  parts, one line each (:func:`report_text_for_html`), so the viewer parses it a part per task.
  Every other user-derived
  string in the markup (title, text summary) goes through :func:`html.escape`.
- A Content-Security-Policy ``<meta>`` allows scripts only by the sha256 hash of the two
  inlined scripts, the stylesheet only by its hash, no connections, no base URL, no forms;
  images only from ``data:``/``blob:`` (PNG export), workers only from ``blob:`` and only
  when the bundle starts one.
- The page works without JavaScript as far as it can: the header and the plain-text
  summary (:meth:`Report.summary`) are static markup.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import html
import itertools
import json
import re
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nstviz.errors import NstvizError, ReportFormatError

if TYPE_CHECKING:
    from nstviz.report import Report

REPORT_ELEMENT_ID = "nstviz-report"
"""Id of the ``<script>`` data element holding the Report."""
REPORT_ENCODING = "gzip+base64"
"""The ``data-encoding`` of the Report element: JSON text, gzip-compressed, then base64."""
ROOT_ELEMENT_ID = "nstviz-root"
"""Id of the element the standalone viewer renders into."""

_BUNDLE_HINT = "run `pip install -e .` (it builds the viewer) or `node js/build.mjs`"

# Characters that must not appear raw in JSON embedded in HTML: `<` and `>` could form
# `</script>` or `<!--`, `&` is escaped for good measure, U+2028/2029 break older JS parsers,
# and lone surrogates cannot be encoded as UTF-8 at all.
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# Runs in the page before the viewer: JSON download button, and folding the static summary
# (left open in the markup so that it shows when scripts are off).
_BOOT_JS = """\
(function () {
  "use strict";
  var data = document.getElementById("nstviz-report");
  var button = document.getElementById("nstviz-download-json");
  // the Report's JSON text: gzip+base64 in the element, decompressed by the browser
  function reportText() {
    if (data.getAttribute("data-encoding") !== "gzip+base64") { return Promise.resolve(data.textContent); }
    var bin = atob(data.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(plainJson);
  }
  // a big Report is embedded in parts, one per line (report_text_for_html): joined back here
  function plainJson(text) {
    if (text.slice(0, 8) !== '[{"run":') { return text; }
    var lines = text.split("\\n");
    var out = lines[1];
    var line = 2;
    JSON.parse(lines[0]).forEach(function (entry) {
      var nodes = lines.slice(line, line + entry.parts).map(function (p) { return p.slice(1, -1); });
      line += entry.parts;
      var joined = '"nodes":[' + nodes.join(",") + "]";
      out = out.replace('"nodes":["\\\\u0000' + entry.marker + '"]', function () { return joined; });
    });
    return out;
  }
  function save(text) {
    var url = URL.createObjectURL(new Blob([text], {type: "application/json"}));
    var a = document.createElement("a");
    a.href = url;
    a.download = button.getAttribute("data-filename") || "nstviz-report.json";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  }
  if (button && data) {
    button.addEventListener("click", function () { reportText().then(save); });
  }
  var summary = document.getElementById("nstviz-text-summary");
  if (summary) { summary.open = false; }
})();
"""

_PAGE_CSS = """\
html, body { margin: 0; padding: 0; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px;
  color: var(--jp-ui-font-color1, #1f2328); background: var(--jp-layout-color0, #ffffff); }
.nstviz-page-header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px;
  padding: 10px 16px; border-bottom: 1px solid #d0d7de; }
.nstviz-page-header h1 { font-size: 17px; margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.nstviz-page-meta { margin: 0; color: #57606a; font-size: 12.5px; overflow-wrap: anywhere; }
.nstviz-page-meta span + span::before { content: " \\00b7  "; }
.nstviz-page-actions { margin-left: auto; }
.nstviz-page-actions button { font: inherit; font-size: 12.5px; padding: 3px 10px; cursor: pointer;
  border: 1px solid #d0d7de; border-radius: 5px; background: #f6f8fa; color: inherit; }
#nstviz-root { min-height: 60vh; }
.nstviz-page-summary { margin: 8px 16px 16px; }
.nstviz-page-summary pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12.5px;
  background: #f6f8fa; padding: 10px; border-radius: 6px; }
@media (max-width: 900px) {
  /* a narrow window: one header row, so the view keeps the height (the meta is in the text summary) */
  .nstviz-page-header { flex-wrap: nowrap; padding: 6px 10px; }
  .nstviz-page-header h1 { font-size: 15px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; flex: 1 1 auto; }
  .nstviz-page-meta { display: none; }
}
.nstviz-noscript { margin: 12px 16px; padding: 8px 12px; background: #fff8c5; border-radius: 6px; }
@media (prefers-color-scheme: dark) {
  body { color: #e6edf3; background: #0d1117; }
  .nstviz-page-header { border-color: #30363d; }
  .nstviz-page-meta { color: #8d96a0; }
  .nstviz-page-actions button, .nstviz-page-summary pre { background: #161b22; border-color: #30363d; }
  .nstviz-noscript { background: #3b2e00; }
}
"""


@dataclass(frozen=True, slots=True)
class ViewerAssets:
    """The viewer's files that a standalone page inlines."""

    script: str
    """``standalone.js``: an IIFE that renders the Report found in the page."""
    css: str
    """``viewer.css``."""


def static_dir() -> Path:
    """Return the folder holding the built viewer bundle (``nstviz/static``)."""
    return Path(str(resources.files("nstviz"))) / "static"


def load_viewer_assets(directory: Path | None = None) -> ViewerAssets:
    """Read ``standalone.js`` and ``viewer.css`` from the built bundle.

    Args:
        directory: where to look; defaults to :func:`static_dir`.

    Raises:
        NstvizError: the bundle has not been built.
    """
    folder = directory or static_dir()
    script_path = folder / "standalone.js"
    css_path = folder / "viewer.css"
    if not script_path.is_file():
        raise NstvizError(f"the nstviz viewer bundle is missing ({script_path} not found); {_BUNDLE_HINT}")
    css = css_path.read_text(encoding="utf-8") if css_path.is_file() else ""
    return ViewerAssets(script=script_path.read_text(encoding="utf-8"), css=css)


def embed_json(text: str) -> str:
    r"""Make JSON text safe to place inside a ``<script type="application/json">`` element.

    Only characters inside JSON strings are changed (every one below is invalid elsewhere
    in JSON), each to its ``\uXXXX`` escape, so the text parses to the same value.

    Args:
        text: JSON text (may contain any code point, lone surrogates included).

    Returns:
        Pure JSON with no ``<``, ``>``, ``&``, U+2028, U+2029 or lone surrogate.
    """
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def report_json_for_html(report: Report) -> str:
    """Return the Report as compact JSON ready for :func:`embed_json`-style embedding."""
    return _page_json(report.to_dict())


def _page_json(value: Any) -> str:
    return embed_json(json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")))


PARTS_OVER_CHARS = 5_000_000
"""A Report whose JSON is longer than this is embedded in parts (:func:`report_text_for_html`)."""
PART_NODES = 5_000
"""Nodes per part of a big graph's node list."""
PARTS_START = '[{"run":'
"""How a Report in parts starts (its index); a Report's JSON starts with ``{``."""


def _part_marker(name: str) -> str:
    """The text that stands for a graph's node list in the Report of a page in parts."""
    return f'"nodes":["\\u0000{name}"]'


def report_text_for_html(
    report: Report, *, parts_over_chars: int = PARTS_OVER_CHARS, part_nodes: int = PART_NODES
) -> str:
    """Return the text the page embeds: :func:`report_json_for_html`, or a big Report in parts.

    A Report longer than ``parts_over_chars`` whose graphs have more than ``part_nodes`` nodes is
    written as lines: the index (``[{"run", "graph", "parts", "marker"}, ...]``), the Report
    with each such graph's node list replaced by its marker (a NUL and a name no string of the
    Report holds), then the node lists ``part_nodes`` at a time, each a JSON array. The viewer
    parses one line per task (one 13 MB ``JSON.parse`` of a 50k-node Report was a main-thread
    task of up to 200 ms); :func:`plain_report_json` gives the Report's JSON back, character
    for character.
    """
    data = report.to_dict()
    held: list[tuple[str, int, list[Any]]] = []
    for run_name, run in data["runs"].items():
        for at, graph in enumerate(run["graphs"]):
            if len(graph["nodes"]) > part_nodes:
                held.append((run_name, at, graph["nodes"]))
                graph["nodes"] = []
    if not held:
        return _page_json(data)
    emptied = _page_json(data)
    stem = next(f"nstviz-part-{n}-" for n in itertools.count() if f"nstviz-part-{n}-" not in emptied)
    markers = [f"{stem}{k}" for k in range(len(held))]
    for (run_name, at, _), marker in zip(held, markers, strict=True):
        data["runs"][run_name]["graphs"][at]["nodes"] = [f"\0{marker}"]
    skeleton = _page_json(data)
    step = max(part_nodes, 1)
    parts = [[_page_json(nodes[a : a + step]) for a in range(0, len(nodes), step)] for _, _, nodes in held]
    if len(skeleton) + sum(len(p) for ps in parts for p in ps) <= parts_over_chars:
        return _joined(skeleton, markers, parts)
    index = [
        {"run": name, "graph": at, "parts": len(ps), "marker": marker}
        for (name, at, _), ps, marker in zip(held, parts, markers, strict=True)
    ]
    return "\n".join([_page_json(index), skeleton, *(p for ps in parts for p in ps)])


def _joined(skeleton: str, markers: list[str], parts: list[list[str]]) -> str:
    for marker, ps in zip(markers, parts, strict=True):
        nodes = '"nodes":[' + ",".join(p[1:-1] for p in ps) + "]"
        skeleton = skeleton.replace(_part_marker(marker), nodes, 1)
    return skeleton


def plain_report_json(text: str) -> str:
    """The Report's JSON of a page's embedded text (:func:`report_text_for_html`): parts joined.

    Raises:
        ReportFormatError: the parts do not fit their index.
    """
    if not text.startswith(PARTS_START):
        return text
    try:
        index_line, skeleton, *lines = text.split("\n")
        index = json.loads(index_line)
        counts = [int(entry["parts"]) for entry in index]
        markers = [str(entry["marker"]) for entry in index]
    except (ValueError, TypeError, KeyError) as exc:
        raise ReportFormatError(f"the nstviz Report in this HTML file has a corrupted index of parts ({exc})") from None
    if sum(counts) != len(lines):
        raise ReportFormatError(
            f"the nstviz Report in this HTML file is truncated: its index names {sum(counts)} parts, it holds {len(lines)}"
        )
    parts, at = [], 0
    for n in counts:
        parts.append(lines[at : at + n])
        at += n
    return _joined(skeleton, markers, parts)


def report_payload_for_html(report: Report) -> str:
    """Return the Report as the page embeds it: :func:`report_text_for_html`, gzip, base64.

    Deterministic (no timestamp in the gzip header): the same Report gives the same page.
    """
    raw = report_text_for_html(report).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


_REPORT_TAG = re.compile(
    rf'<script type="application/(json|gzip)" id="{REPORT_ELEMENT_ID}"(?: data-encoding="([^"]*)")?>'
)


def extract_report_json(page: str) -> str:
    """Return the JSON text embedded in a page written by :func:`render_html`.

    Reads both forms: gzip+base64 (this version) and JSON as text (pages written before).

    Raises:
        ReportFormatError: the page holds no nstviz Report, or its data is corrupted.
    """
    start_tag = _REPORT_TAG.search(page)
    if start_tag is None:
        raise ReportFormatError("this HTML file holds no nstviz Report (no #nstviz-report element)")
    end = page.find("</script>", start_tag.end())
    if end < 0:
        raise ReportFormatError("the nstviz Report element in this HTML file is not closed")
    body = page[start_tag.end() : end]
    encoding = start_tag.group(2)
    if encoding is None and start_tag.group(1) == "json":
        return body
    if encoding != REPORT_ENCODING:
        raise ReportFormatError(f"the nstviz Report in this HTML file has an unknown encoding {encoding!r}")
    try:
        text = gzip.decompress(base64.b64decode(body.strip(), validate=True)).decode("utf-8")
    except (binascii.Error, OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise ReportFormatError(
            f"the nstviz Report in this HTML file is corrupted or truncated ({type(exc).__name__}: {exc})"
        ) from None
    return plain_report_json(text)


def _text(value: object) -> str:
    """Escape user-derived text for HTML markup (lone surrogates become U+FFFD)."""
    return html.escape(_LONE_SURROGATE.sub("\ufffd", str(value)), quote=True)


def _lf(source: str) -> str:
    return source.replace("\r\n", "\n").replace("\r", "\n")


def _sha256(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _guard_inline(source: str, tag: str) -> str:
    r"""Keep a bundle from closing its own ``<script>``/``<style>`` element.

    ``<\/`` means ``</`` inside JS strings, regexps and comments, and in CSS strings; a
    bundle that has ``</script`` in real code (it never does) would have been unparseable.
    """
    return re.sub(rf"</(?={tag})", r"<\\/", source, flags=re.IGNORECASE)


def _summary_text(report: Report) -> str:
    summary = getattr(report, "summary", None)
    if callable(summary):
        try:
            return str(summary())
        except Exception as exc:  # a summary bug must not cost the user the whole file
            return f"(text summary unavailable: {type(exc).__name__}: {exc})"
    lines = []
    for name, run in report.runs.items():
        breaks = sum(b.count for b in run.breaks)
        lines.append(
            f"{name}: {len(run.graphs)} graphs, {len(run.breaks)} distinct breaks ({breaks} hits), "
            f"{len(run.regions)} non-strict regions" + (f", error: {run.error}" if run.error else "")
        )
    if report.outputs.match is not None:
        lines.append("outputs: " + ("match" if report.outputs.match else "DIFFER"))
    return "\n".join(lines)


def page_title(report: Report, title: str | None = None) -> str:
    """The page's title: the given one, the Report's, or one built from what was captured."""
    if title:
        return title
    if report.title:
        return f"nstviz: {report.title}"
    if report.nonstrict:
        return "nstviz: nonstrict_trace(" + ", ".join(report.nonstrict) + ")"
    return "nstviz report"


def _meta_items(report: Report) -> list[str]:
    items = []
    if report.created:
        items.append(f"captured {report.created}")
    items.append(f"via {report.entry}")
    if report.nonstrict:
        items.append("nonstrict: " + ", ".join(report.nonstrict))
    items.append(f"backend {report.backend}")
    items.append(f"torch {report.torch_version}")
    if report.python_version:
        items.append(f"Python {report.python_version}")
    if report.nstviz_version:
        items.append(f"nstviz {report.nstviz_version}")
    return items


def _uses_worker(script: str) -> bool:
    return "Worker(" in script


def content_security_policy(scripts: list[str], styles: list[str], *, worker: bool) -> str:
    """Build the page's CSP: only the given inline scripts and styles, nothing from outside.

    Args:
        scripts: exact text of every inline ``<script>`` that must run.
        styles: exact text of every inline ``<style>``.
        worker: allow ``blob:`` workers (the viewer lays out big graphs in one).
    """
    directives = [
        "default-src 'none'",
        "script-src " + " ".join(_sha256(s) for s in scripts),
        "style-src " + " ".join(_sha256(s) for s in styles),
        "img-src data: blob:",
        "connect-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "object-src 'none'",
        "frame-src 'none'",
        "manifest-src 'none'",
    ]
    if worker:
        directives.append("worker-src blob:")
    return "; ".join(directives)


def render_html(report: Report, *, title: str | None = None, assets: ViewerAssets | None = None) -> str:
    """Render a Report as one self-contained HTML page.

    Args:
        report: what to show.
        title: page title; defaults to one built from the Report.
        assets: the viewer bundle; defaults to the built one in ``nstviz/static``.

    Returns:
        The page (a ``str``; encode as UTF-8, which always succeeds).

    Raises:
        NstvizError: the viewer bundle has not been built.
    """
    assets = assets or load_viewer_assets()
    # The HTML parser turns CR LF into LF before the browser hashes a script: do it first.
    script = _guard_inline(_lf(assets.script), "script")
    viewer_css = _guard_inline(_lf(assets.css), "style")
    page_name = page_title(report, title)
    created = report.created[:19].replace(":", "").replace("T", "-") if report.created else ""
    filename = "nstviz-report" + (f"-{created}" if created else "") + ".json"
    csp = content_security_policy([_BOOT_JS, script], [_PAGE_CSS, viewer_css], worker=_uses_worker(script))
    meta = "".join(f"<span>{_text(item)}</span>" for item in _meta_items(report))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_text(csp)}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="nstviz {_text(report.nstviz_version or "")}">
<title>{_text(page_name)}</title>
<style>{_PAGE_CSS}</style>
<style>{viewer_css}</style>
</head>
<body>
<header class="nstviz-page-header">
<h1 title="{_text(page_name)}">{_text(page_name)}</h1>
<p class="nstviz-page-meta">{meta}</p>
<div class="nstviz-page-actions"><button type="button" id="nstviz-download-json" data-filename="{_text(filename)}">Download JSON</button></div>
</header>
<noscript><p class="nstviz-noscript">The interactive view needs JavaScript. The text summary is below; the full Report is the JSON inside this file.</p></noscript>
<main id="{ROOT_ELEMENT_ID}"></main>
<details class="nstviz-page-summary" id="nstviz-text-summary" open>
<summary>Text summary</summary>
<pre>{_text(_summary_text(report))}</pre>
</details>
<script type="application/gzip" id="{REPORT_ELEMENT_ID}" data-encoding="{REPORT_ENCODING}">{report_payload_for_html(report)}</script>
<script>{_BOOT_JS}</script>
<script>{script}</script>
</body>
</html>
"""


def save_html(report: Report, path: str | Path, *, title: str | None = None) -> Path:
    """Write :func:`render_html` to ``path`` (UTF-8) and return the path written.

    Raises:
        NstvizError: the viewer bundle has not been built.
        OSError: the file cannot be written.
    """
    target = Path(path)
    page = render_html(report, title=title)
    target.write_bytes(page.encode("utf-8"))  # bytes: no newline translation, hashes stay exact
    return target


__all__ = [
    "REPORT_ELEMENT_ID",
    "REPORT_ENCODING",
    "ROOT_ELEMENT_ID",
    "ViewerAssets",
    "content_security_policy",
    "embed_json",
    "extract_report_json",
    "load_viewer_assets",
    "page_title",
    "plain_report_json",
    "render_html",
    "report_json_for_html",
    "report_payload_for_html",
    "report_text_for_html",
    "save_html",
    "static_dir",
]
