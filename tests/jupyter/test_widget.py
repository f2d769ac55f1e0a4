from __future__ import annotations

import json

import pytest

from nstviz.errors import UsageError
from nstviz.jupyter.widget import Viewer
from nstviz.report import Report

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_report_round_trips_through_the_trait(report: Report) -> None:
    w = Viewer(report)
    assert w.report == report
    assert Report.from_json(w.report_json) == report
    assert w.progress["phase"] == "done"
    assert w.progress["runs_done"] == w.progress["runs_total"] == 2
    # JSON text and dicts are accepted too
    assert Viewer(report.to_json()).report == report
    assert Viewer(json.loads(report.to_json())).report == report


def test_report_setter_rejects_other_types() -> None:
    with pytest.raises(UsageError, match="Report"):
        Viewer(42)  # type: ignore[arg-type]


def test_traits_are_synced() -> None:
    synced = set(Viewer().keys)
    assert {"report_json", "progress", "selected_node", "selected_break", "view", "standalone"} <= synced
    assert {"_esm", "_css"} <= synced


def test_mimebundle_has_an_escaped_static_fallback(report: Report) -> None:
    data, _meta = Viewer(report)._repr_mimebundle_()
    assert WIDGET_MIME in data
    html = data["text/html"]
    assert "1 break → 0, 1 graph → 1, outputs match" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # the same headline as the viewer, the CLI and summary(): the Report's own
    assert report.headline.text == "1 break → 0, 1 graph → 1, outputs match"
    assert data["text/plain"].splitlines()[0] == report.headline.text
    assert "GB0026" in data["text/plain"]
    assert "  break GB0026 FATAL at cell-1:5 (func): Call to `torch._dynamo.graph_break()`" in data["text/plain"]
    assert "    stopped the compile (fullgraph), reached 1×" in data["text/plain"]


def test_mimebundle_while_running_shows_progress() -> None:
    w = Viewer()
    w.start_progress(runs_total=2, message="starting the baseline run")
    w.set_progress("nonstrict", "run 2 of 2", runs_done=1)
    data, _ = w._repr_mimebundle_()
    assert WIDGET_MIME in data
    assert "nonstrict: run 2 of 2" in data["text/plain"]
    assert w.progress["runs_done"] == 1 and w.progress["runs_total"] == 2
    assert w.progress["elapsed_s"] >= 0


def test_select_node_and_break(report: Report) -> None:
    w = Viewer(report)
    w.select(node="sin")
    assert w.selected_node == {"run": "nonstrict", "graph": "0/0:aten_inference", "node": "sin"}
    assert w.view["graph"] == "0/0:aten_inference"
    w.select(break_="GB0026")
    assert w.selected_break == {"run": "baseline", "index": 0}
    w.select(break_=0, run="baseline")
    assert w.selected_break == {"run": "baseline", "index": 0}
    w.select(node="l_x_", run="baseline", graph="0/0:dynamo")
    assert w.selected_node["run"] == "baseline"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"node": "nope"}, "no node named 'nope'"),
        ({"run": "attempt-9", "node": "sin"}, "no run named 'attempt-9'"),
        ({"break_": 3}, "index 3 is out of range"),
        ({"break_": "GB9999"}, "no break matching"),
        ({"graph": "9/9:dynamo"}, "no graph"),
    ],
)
def test_select_rejects_what_is_not_in_the_report(report: Report, kwargs: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Viewer(report).select(**kwargs)


def test_select_before_the_report_is_ready() -> None:
    with pytest.raises(UsageError, match="not ready"):
        Viewer().select(node="x")


def test_default_export_path_is_derived_from_the_title(report: Report, tmp_path) -> None:
    assert Viewer(report).default_html_path().name == "nstviz-seed-example.html"
    assert Viewer(report, html_path=tmp_path / "x.html").default_html_path() == tmp_path / "x.html"


def test_export_message_answers_export_failed_when_nothing_to_export() -> None:
    w = Viewer()
    sent = []
    w.send = sent.append  # type: ignore[method-assign]
    w._handle_custom_msg({"type": "export_html"}, [])
    assert sent and sent[0]["type"] == "export_failed" and "not ready" in sent[0]["message"]
    w._handle_custom_msg({"type": "something_else"}, [])
    assert len(sent) == 1


def test_export_button_message_writes_the_standalone_page(report: Report, tmp_path) -> None:
    from nstviz.render.html import extract_report_json

    w = Viewer(report, html_path=tmp_path / "out.html")
    sent = []
    w.send = sent.append  # type: ignore[method-assign]
    w._handle_custom_msg({"type": "export_html"}, [])
    assert sent == [{"type": "export_done", "path": str((tmp_path / "out.html").resolve())}]
    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert Report.from_json(extract_report_json(page)) == report
    assert w.last_export == str(tmp_path / "out.html")
    # and from Python, to any path
    assert Viewer(report).export_html(tmp_path / "again.html") == str(tmp_path / "again.html")


def test_export_failure_is_reported_to_the_page(report: Report, tmp_path) -> None:
    w = Viewer(report, html_path=tmp_path / "no" / "such" / "dir" / "out.html")
    sent = []
    w.send = sent.append  # type: ignore[method-assign]
    w._handle_custom_msg({"type": "export_html"}, [])
    assert len(sent) == 1 and sent[0]["type"] == "export_failed" and sent[0]["message"]
