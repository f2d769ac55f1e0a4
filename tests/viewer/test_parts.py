"""A big Report embedded in parts (``report_text_for_html``) opens whole in Chromium.

The synthetic 2k Report is written in parts of 500 nodes (a 50k-node page is written so by
default; the thresholds are lowered here to keep the test fast): the viewer shows every node of
the graph, the page's "Download JSON" gives the Report's JSON character for character, and a
page with a part missing shows the viewer's error, never a part of the graph.
"""

from __future__ import annotations

import base64
import gzip
from pathlib import Path

from nstviz.render.html import report_json_for_html, report_text_for_html

HOOK = "document.querySelector('#nstviz-root').__nstviz"
PANE = f"(() => {{ const p = {HOOK}.panes()[0]; return {{graph: p.graph, total: p.totalNodes}}; }})()"


def with_payload(page: Path, text: str) -> Path:
    """The page with its embedded Report replaced by ``text`` (gzip+base64, as the page holds it)."""
    html = page.read_text(encoding="utf-8")
    start = html.index(">", html.index('id="nstviz-report"')) + 1
    end = html.index("</script>", start)
    payload = base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode("ascii")
    page.write_text(html[:start] + payload + html[end:], encoding="utf-8")
    return page


def test_a_report_in_parts_opens_whole_and_downloads_as_one_json(synthetic_2k, write_page, drive, tmp_path):
    report = synthetic_2k
    parts = report_text_for_html(report, parts_over_chars=0, part_nodes=500)
    assert parts.count("\n") >= 5  # the index, the Report, then the parts
    page = with_payload(write_page(report, name="parts.html"), parts)
    saved = tmp_path / "downloaded.json"
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": PANE},
        {"do": "eval", "js": "document.querySelectorAll('.nsv-fatal-msg').length"},
        {"do": "download", "selector": "#nstviz-download-json", "path": str(saved)},
    ]})
    pane, fatal = out["results"][1], out["results"][2]
    graph = report.runs["nonstrict"].graphs[-1]
    assert (pane["graph"], pane["total"], fatal) == (graph.id, len(graph.nodes), 0)
    assert saved.read_text(encoding="utf-8") == report_json_for_html(report)


def test_a_report_with_a_part_missing_shows_the_error_not_half_a_graph(synthetic_2k, write_page, drive):
    parts = report_text_for_html(synthetic_2k, parts_over_chars=0, part_nodes=500)
    page = with_payload(write_page(synthetic_2k, name="cut.html"), parts[: parts.rindex("\n")])
    out = drive({"page": str(page), "steps": [
        {"do": "wait", "ms": 1500},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-fatal-msg')].map((e) => e.textContent)"},
        {"do": "eval", "js": "document.querySelectorAll('#nstviz-root canvas').length"},
    ]})
    messages, canvases = out["results"][1], out["results"][2]
    assert len(messages) == 1 and "truncated or corrupted" in messages[0], messages
    assert canvases == 0
