"""The anywidget side of the contract, in Chromium: viewer.js as an ES module with a model.

A harness page (no Jupyter) imports ``nstviz/static/viewer.js`` from a Blob URL, as the
standalone notes describe, and gives ``render`` a model object that behaves like anywidget's
(traits, change events, save_changes, send, msg:custom). Checks the progress screen, the
switch to the Report, Python -> JS and JS -> Python selection, the export message and cleanup.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import REPO

pytestmark = pytest.mark.browser

HARNESS = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>%(css)s</style></head>
<body><div id="nstviz-root"></div>
<script type="text/plain" id="esm">%(esm)s</script>
<script type="application/json" id="data">%(data)s</script>
<script type="module">
const listeners = new Map();
const state = {report_json: "", progress: {phase: "baseline", message: "running the cell as written", elapsed_s: 1.5, runs_done: 0, runs_total: 2},
  selected_node: {}, selected_break: {}, view: {}, standalone: false};
const log = {saves: 0, sent: [], sets: []};
const fire = (name, arg) => (listeners.get(name) || []).slice().forEach((fn) => fn(arg));
const model = {
  get: (k) => state[k],
  set: (k, v) => { state[k] = v; log.sets.push(k); fire("change:" + k, v); },
  on: (n, fn) => { if (!listeners.has(n)) listeners.set(n, []); listeners.get(n).push(fn); },
  off: (n, fn) => { const l = listeners.get(n) || []; listeners.set(n, fn ? l.filter((x) => x !== fn) : []); },
  save_changes: () => { log.saves++; },
  send: (msg) => { log.sent.push(msg); },
};
// "Python" side helpers for the test
window.__py = {
  state, log,
  setTrait: (k, v) => { state[k] = v; fire("change:" + k, v); },
  message: (msg) => fire("msg:custom", msg),
  loadReport: () => { state.report_json = document.getElementById("data").textContent; fire("change:report_json"); },
};
const code = document.getElementById("esm").textContent;
const mod = await import(URL.createObjectURL(new Blob([code], {type: "text/javascript"})));
window.__cleanup = mod.default.render({model, el: document.getElementById("nstviz-root")});
window.__rendered = true;
</script></body></html>
"""

HOOK = "document.querySelector('#nstviz-root').__nstviz"


def test_widget_module_contract(real_report_json, tmp_path, drive, artifacts):
    static = REPO / "nstviz" / "static"
    esm = re.sub(r"</(?=script)", r"<\\/", (static / "viewer.js").read_text(encoding="utf-8"), flags=re.I)
    data = real_report_json.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    page = tmp_path / "harness.html"
    page.write_text(HARNESS % {"css": (static / "viewer.css").read_text(encoding="utf-8"), "esm": esm, "data": data},
                    encoding="utf-8")
    report = json.loads(real_report_json)
    run = "nonstrict"
    graph = next(g for g in report["runs"][run]["graphs"] if g["level"] != "dynamo")
    target = graph["nodes"][len(graph["nodes"]) // 2]["name"]
    base_graph = next(g["id"] for g in report["runs"]["baseline"]["graphs"] if g["level"] == graph["level"])
    out = drive({"page": str(page), "steps": [
        {"do": "wait_for", "js": "window.__rendered && document.querySelector('#nstviz-root').textContent.includes('Running: baseline')"},
        {"do": "eval", "js": "[window.__rendered, document.querySelector('#nstviz-root').textContent, document.querySelector('#nstviz-root').dataset.nstvizReady]"},
        {"do": "screenshot", "path": str(artifacts / "widget-progress.png")},
        {"do": "eval", "js": "window.__py.loadReport()"},
        {"do": "ready"},
        {"do": "eval", "js": f"window.__py.setTrait('selected_node', {{run: '{run}', graph: '{graph['id']}', node: '{target}'}})"},
        {"do": "wait_for", "js": f"(document.querySelector('.nsv-details') || {{dataset: {{}}}}).dataset.node === '{target}'"},
        {"do": "eval", "js": f"[{HOOK}.panes().map(p => [p.run, p.graph, p.selected]), document.querySelector('.nsv-details') && document.querySelector('.nsv-details').dataset.node]"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=breaks]"},
        {"do": "click", "selector": ".nsv-break[data-run=baseline][data-index='0'] .nsv-break-head"},
        {"do": "eval", "js": "[window.__py.state.selected_break, window.__py.log.saves]"},
        {"do": "click", "selector": "button[title='Save this report as one self-contained HTML file']"},
        {"do": "eval", "js": "window.__py.message({type: 'export_done', path: '/tmp/x.html'})"},
        {"do": "eval", "js": "[window.__py.log.sent, document.querySelector('.nsv-toast').textContent]"},
        {"do": "screenshot", "path": str(artifacts / "widget-after-select.png")},
        {"do": "eval", "js": "window.__py.state.view"},
        {"do": "eval", "js": f"window.__py.setTrait('view', {{run: 'baseline', graph: '{base_graph}', mode: 'side_by_side'}})"},
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.mode(), {HOOK}.panes().map(p => [p.run, p.graph])]"},
        {"do": "eval", "js": "(() => { window.__cleanup(); return [document.querySelector('#nstviz-root').children.length, typeof document.querySelector('#nstviz-root').__nstviz]; })()"},
    ]})
    assert out["errors"] == [], out["errors"]
    res = out["results"]
    rendered, text, ready = res[1]
    assert rendered and "running the cell as written" in text and "Running: baseline" in text and ready == "0"
    panes, details_node = res[7]
    assert [run, graph["id"], target] in panes
    assert details_node == target
    sel_break, saves = res[10]
    assert sel_break == {"run": "baseline", "index": 0} and saves >= 1
    sent, toast = res[13]
    assert sent == [{"type": "export_html"}]
    assert "/tmp/x.html" in toast
    view = res[15]
    assert view["mode"] == "side_by_side" and view["run"] == "baseline" and view["graph"]  # JS -> Python (the break showed its graphs)
    mode, shown = res[18]
    assert mode == "side_by_side" and ["baseline", base_graph] in shown  # Python -> JS
    assert res[19] == [0, "undefined"]


def test_progress_screen_ticks_and_shows_terminal_phases(tmp_path, drive, artifacts):
    static = REPO / "nstviz" / "static"
    esm = re.sub(r"</(?=script)", r"<\\/", (static / "viewer.js").read_text(encoding="utf-8"), flags=re.I)
    page = tmp_path / "harness.html"
    page.write_text(HARNESS % {"css": (static / "viewer.css").read_text(encoding="utf-8"), "esm": esm, "data": "{}"},
                    encoding="utf-8")
    status = "document.querySelector('.nsv-progress-status').textContent"
    phase = "document.querySelector('.nsv-progress-phase').textContent"
    seconds = f"(({status} || '').match(/([0-9.]+) s$/) || [0, 0])[1] * 1"
    out = drive({"page": str(page), "steps": [
        {"do": "wait_for", "js": f"{seconds} >= 1.5"},
        {"do": "eval", "js": status},
        {"do": "wait_for", "js": f"{seconds} >= 2.0"},  # the clock ticks between messages
        {"do": "eval", "js": status},
        {"do": "eval", "js": "window.__py.setTrait('progress', {phase: 'interrupted', message: 'stopped by KeyboardInterrupt', elapsed_s: 3})"},
        {"do": "eval", "js": f"[{phase}, {status}]"},
        {"do": "screenshot", "path": str(artifacts / "widget-interrupted.png")},
        {"do": "wait", "ms": 500},  # then it must still say 3.0 s (a longer wait is only stricter)
        {"do": "eval", "js": status},
        {"do": "eval", "js": "window.__py.setTrait('progress', {phase: 'error', message: 'boom', elapsed_s: 4})"},
        {"do": "eval", "js": f"[{phase}, document.querySelector('#nstviz-root').dataset.nstvizState]"},
    ]})
    assert out["errors"] == [], out["errors"]
    res = out["results"]
    first, later = (float(res[i].split(" · ")[-1].rstrip(" s")) for i in (1, 3))
    assert 1.5 <= first < later, (res[1], res[3])  # the clock ticks between messages
    assert res[5] == ["Interrupted", "3.0 s"]
    assert res[8] == "3.0 s"  # stopped on a terminal phase
    assert res[10] == ["Failed", "error"]
