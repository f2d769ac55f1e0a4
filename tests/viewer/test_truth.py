"""What the view says must be so: Merged mode's baseline graphs, the Node tab, the selected break.

On the ``module_block_break`` fixture (three blocks each calling ``rms_scale``, which breaks): the
baseline ran block 0 in ``1/0_1`` (Linear), ``3/0`` (``rms_scale``'s body), ``4/0`` (relu and
residual), blocks 1-2 in ``1/1_1``, ``3/0``, ``4/1`` after a recompile. Merged mode must list
all five where their code is; the Node tab of an op inlined from ``rms_scale`` shows its own
line (6) and the call site (14); ATen inputs show their parameter; selecting the break says which
pane ends at it and which resumes after it, and outlines the ops from the breaking line. Layout
is checked as a person sees it (clipped or wrapped text) at 1500x950, 1100x800 and 670 px wide.
One browser session per window size.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nstviz.report import Report

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "module_block_break.report.json"
HOOK = "document.querySelector('#nstviz-root').__nstviz"
SRC = "<fixture:module_block_break>"

# what a person sees of an element: cut (scrollWidth > clientWidth), wrapped (taller than 1.6 lines),
# or outside its pane
SEEN = """(sel) => [...document.querySelectorAll(sel)].map((e) => {
  const cs = getComputedStyle(e); const lh = parseFloat(cs.lineHeight) || parseFloat(cs.fontSize) * 1.3;
  const r = e.getBoundingClientRect(); const pane = e.closest('.nsv-pane'); const pr = pane ? pane.getBoundingClientRect() : null;
  return {text: e.textContent, cut: e.scrollWidth > e.clientWidth + 1, wrapped: r.height > 1.6 * lh,
          outside: pr ? (r.right > pr.right + 1 || r.left < pr.left - 1) : false, visible: r.width > 0 && r.height > 0,
          side: e.dataset.side, ops: e.dataset.ops};
})"""

SIZES = [pytest.param((1500, 950), id="1500x950"), pytest.param((1100, 800), id="1100x800"),
         pytest.param((670, 800), id="670px")]


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.load_json(FIXTURE)


def _expected_graphs(report: Report) -> set[str]:
    return {g.id for g in report.runs["baseline"].graphs if g.level == "dynamo" and g.op_count}


@pytest.mark.parametrize("size", SIZES)
def test_merged_mode_and_node_tab_say_what_the_baseline_did(size, report, write_page, drive, artifacts):
    page = write_page(report)
    w = size[0]
    out = drive({"page": str(page), "viewport": list(size), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button.nsv-seg-btn[data-mode=merged]"},
        {"do": "ready"},
        {"do": "click", "selector": "button[title='expand all groups']"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-legend-row')].filter(r => /^Baseline graph/.test(r.textContent)).flatMap(r => [...r.querySelectorAll('.nsv-lg')].map(e => e.textContent))"},
        {"do": "screenshot", "path": str(artifacts / f"truth-merged-{w}.png")},
        {"do": "click_node", "pane": 0, "name": "pow_2"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-details dt')].map(e => [e.textContent, e.nextElementSibling.textContent])"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-details .nsv-stack li > button')].map(e => e.textContent)"},
        {"do": "eval", "js": f"({SEEN})('.nsv-details dd')"},
        {"do": "screenshot", "path": str(artifacts / f"truth-node-{w}.png")},
        {"do": "fill", "selector": ".nsv-search", "text": "primals_4"},
        {"do": "press", "key": "Enter"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-details dt')].map(e => [e.textContent, e.nextElementSibling.textContent])"},
        {"do": "hover_node", "pane": 0, "name": "primals_4"},
        {"do": "eval", "js": "document.querySelector('.nsv-tip').textContent"},
    ]})
    assert out["errors"] == [] and out["requests"] == []
    res = out["results"]
    legend = res[4]
    assert sorted(legend) == sorted(_expected_graphs(report)), legend  # all five baseline graphs, once each
    assert len(_expected_graphs(report)) == 5
    rows = dict(res[7])
    assert rows["baseline graph"] == "3/0:dynamo"  # rms_scale's body: the resume function's graph
    assert rows["source line"].endswith(f"{SRC}:6")  # its own line inside rms_scale
    assert rows["called at"].endswith(f"{SRC}:14")  # and the call site
    assert res[8] == [f"{SRC}:14", f"{SRC}:6"]  # the user stack reaches into rms_scale
    seen = res[9]
    assert not [s for s in seen if s["cut"] and len(s["text"]) < 40], seen  # short values are not cut
    rows = dict(res[13])
    assert rows["parameter"] == "fn.1.proj.weight"
    assert "parameter: fn.1.proj.weight" in res[15]


@pytest.mark.parametrize("size", SIZES)
def test_selecting_a_break_marks_where_it_is_on_the_graphs(size, report, write_page, drive, artifacts):
    page = write_page(report)
    w = size[0]
    brk = report.runs["baseline"].breaks[0]
    assert (brk.graph_before, brk.graph_after) == ("1/0_1:dynamo", "3/0:dynamo")
    out = drive({"page": str(page), "viewport": list(size), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=breaks]"},
        {"do": "click", "selector": ".nsv-break[data-run=baseline][data-index='0'] .nsv-break-head"},
        {"do": "ready"},
        {"do": "wait_for", "js": "document.querySelectorAll('.nsv-break-side').length >= 2", "timeout_ms": 5000},
        {"do": "eval", "js": f"{HOOK}.panes().map(p => [p.graph, p.nodes.filter(n => n.linked).map(n => n.name)])"},
        {"do": "eval", "js": f"({SEEN})('.nsv-break-side')"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-break-side')].map(e => e.title)"},
        {"do": "screenshot", "path": str(artifacts / f"truth-break-{w}.png")},
        # the same break, with the nonstrict graph shown: the ops of the breaking call, now in one graph
        {"do": "click", "selector": "button.nsv-seg-btn[data-mode=single]"},
        {"do": "ready"},
        {"do": "eval", "js": "(() => { const s = document.querySelector('.nsv-pane select[aria-label=run]'); s.value = 'nonstrict'; s.dispatchEvent(new Event('change')); return s.value; })()"},
        {"do": "ready"},
        {"do": "wait_for", "js": f"{HOOK}.panes()[0].run === 'nonstrict'", "timeout_ms": 5000},
        {"do": "eval", "js": f"[{HOOK}.panes()[0].graph, {HOOK}.panes()[0].nodes.filter(n => n.linked).length]"},
        {"do": "eval", "js": f"({SEEN})('.nsv-break-side')"},
        {"do": "screenshot", "path": str(artifacts / f"truth-break-nonstrict-{w}.png")},
    ]})
    assert out["errors"] == [] and out["requests"] == []
    res = out["results"]
    panes = res[5]
    assert [p[0] for p in panes] == ["1/0_1:aten_forward", "3/0:aten_forward"]
    # line 5 (graph_break()) computes nothing: the ops of the call that reached it (line 14) are outlined
    assert sorted(panes[0][1]) == ["addmm", "t"]
    assert panes[1][1] == []  # the resume function's ops come from line 6, not from the breaking call
    badges = res[6]
    assert [(b["side"], b["text"]) for b in badges] == [("before", "ends at the break"), ("after", "resumes after the break")]
    for b in badges:
        assert b["visible"] and not b["cut"] and not b["wrapped"] and not b["outside"], (size, b)
    assert f"{SRC}:5" in res[7][0] and f"{SRC}:14" in res[7][0]
    graph, linked = res[14]
    assert graph.startswith("0/0:") and linked > 0
    assert [b["side"] for b in res[15]] == ["ops"]
    assert not res[15][0]["cut"] and not res[15][0]["outside"]

