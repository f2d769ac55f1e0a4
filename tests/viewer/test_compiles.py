"""The Compiles tab in real Chromium: what Dynamo recorded per compile (tlparse's compile pages).

One recorded Report (``tests/fixtures/recompile_limit.report.json``: a frame recompiling on a
Python int until ``recompile_limit``), one browser session per window size. Checked as a person
sees it: the red chip has a tooltip and opens the refused compile naming function and file, the
tab lists every compile, compile ids elsewhere (Breaks, Node tab, graph picker) open it, a graph
link opens the graph, and at 1100x800 and in a 670 px container nothing is cut or wrapped.
"""

from __future__ import annotations

import pathlib

import pytest

from nstviz.report import Report

pytestmark = pytest.mark.browser

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "recompile_limit.report.json"
HOOK = "document.querySelector('#nstviz-root').__nstviz"
SIDE = "document.querySelector('.nsv-tab-body[data-tab=compiles]')"

# Everything a person should be able to read in the Compiles panel: boxes whose text is cut
# (scrollWidth > clientWidth), short values that wrap (taller than 1.6 lines), the panel wider
# than its pane, tabs that do not all show; the page's height, which the panel must not change;
# the graph pane's picker bar, which its compile link must not wrap onto a second row.
LAYOUT = """() => {
  const body = document.querySelector('.nsv-tab-body[data-tab=compiles]');
  const cut = [], wrapped = [];
  for (const el of body.querySelectorAll('[data-fit]')) {
    if (!el.offsetParent) continue;
    if (el.scrollWidth > el.clientWidth + 1) cut.push(el.textContent);
    const lh = parseFloat(getComputedStyle(el).lineHeight) || 16;
    if (el.getBoundingClientRect().height > 1.6 * lh) wrapped.push(el.textContent);
  }
  const tabs = document.querySelector('.nsv-tabs');
  const last = [...tabs.querySelectorAll('.nsv-tab')].pop().getBoundingClientRect();
  return {cut, wrapped, panelOverflow: body.scrollWidth - body.clientWidth,
          tabsFit: tabs.scrollWidth <= tabs.clientWidth + 1 && last.right <= tabs.getBoundingClientRect().right + 1,
          pageHeight: document.documentElement.scrollHeight,
          paneBarRows: Math.max(...[...document.querySelectorAll('.nsv-pane-bar')].map((b) => Math.round(b.getBoundingClientRect().height / 30)))};
}"""
DETAIL = """() => { const d = document.querySelector('.nsv-compile-detail');
  return d && d.offsetParent ? {run: d.dataset.run, id: d.dataset.compile, text: d.textContent} : null; }"""
ROWS = """() => [...document.querySelectorAll('.nsv-compile-row')].filter((r) => r.offsetParent).map((r) =>
  ({run: r.dataset.run, id: r.dataset.compile, text: r.textContent,
    marks: [...r.querySelectorAll('.nsv-chip')].map((c) => c.textContent)}))"""


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.load_json(FIXTURE)


def _open_detail_steps(click_selector: str) -> list[dict]:
    return [
        {"do": "click", "selector": click_selector},
        {"do": "wait_for", "js": "document.querySelector('.nsv-compile-detail') && document.querySelector('.nsv-compile-detail').offsetParent"},
        {"do": "eval", "js": DETAIL},
    ]


def test_chip_tab_links_and_graph(report, write_page, drive, artifacts):
    page = write_page(report)
    chip = "[data-testid=headline] [data-kind=note][data-compile]"
    out = drive({"page": str(page), "viewport": [1100, 800], "steps": [
        {"do": "ready"},
        # 0: the chip's tooltip
        {"do": "eval", "js": f"(() => {{ const c = document.querySelector('{chip}'); return c ? {{title: c.title, tag: c.tagName, pageHeight: document.documentElement.scrollHeight}} : null; }})()"},
        # 1-3: the chip opens the refused compile's detail
        *_open_detail_steps(chip),
        {"do": "eval", "js": LAYOUT},
        {"do": "screenshot", "path": str(artifacts / "compiles-detail-1100.png")},
        # 7-10: back to the list of every compile
        {"do": "click", "selector": ".nsv-compiles-back"},
        {"do": "eval", "js": ROWS},
        {"do": "eval", "js": LAYOUT},
        {"do": "screenshot", "path": str(artifacts / "compiles-list-1100.png")},
        # 11-16: a compile id in the list opens its detail; a graph link there opens the graph
        *_open_detail_steps(".nsv-compile-row[data-run=baseline][data-compile='0/1_1'] .nsv-compile-id"),
        {"do": "click", "selector": ".nsv-compile-detail .nsv-compile-graph[data-graph='0/1_1:dynamo']"},
        {"do": "wait_for", "js": f"{HOOK}.ready() && {HOOK}.panes()[0].graph === '0/1_1:dynamo'"},
        {"do": "eval", "js": f"{HOOK}.panes().map((p) => [p.run, p.graph])"},
        # 17-19: the graph picker's compile link opens the compile of the graph shown
        *_open_detail_steps(".nsv-pane .nsv-pane-compile"),
        # 20-24: the Node tab's compile link
        {"do": "click_node", "pane": 0, "name": "mul"},
        {"do": "wait_for", "js": "document.querySelector('.nsv-tab-body[data-tab=node] .nsv-compile-link')"},
        *_open_detail_steps(".nsv-tab-body[data-tab=node] .nsv-compile-link"),
        # 25-29: a compile id in the Breaks tab (the break opened first)
        {"do": "click", "selector": ".nsv-tab[data-tab=breaks]"},
        {"do": "click", "selector": ".nsv-break[data-run=baseline] .nsv-break-head"},
        *_open_detail_steps(".nsv-break[data-run=baseline] .nsv-compile-link[data-compile='1/0']"),
        # 30-38: in a 670 px container (JupyterLab with its file browser open)
        {"do": "eval", "js": "(() => { const r = document.querySelector('#nstviz-root'); r.style.width = '670px'; r.style.maxWidth = '670px'; return r.getBoundingClientRect().width; })()"},
        *_open_detail_steps(chip),
        {"do": "eval", "js": LAYOUT},
        {"do": "screenshot", "path": str(artifacts / "compiles-detail-670.png")},
        {"do": "click", "selector": ".nsv-compiles-back"},
        {"do": "eval", "js": LAYOUT},
        {"do": "screenshot", "path": str(artifacts / "compiles-list-670.png")},
    ]})
    assert out["errors"] == [] and out["requests"] == [] and out["dialogs"] == 0
    res = out["results"]

    tip = res[1]
    assert tip is not None, "the recompile-limit chip opens nothing"
    assert tip["tag"] == "BUTTON"
    for words in ("recompile_limit", "step", "<fixture:recompile_limit>:10", "runs eagerly", "n == 1"):
        assert words in tip["title"]

    detail = res[4]
    assert (detail["run"], detail["id"]) == ("baseline", "0/2")
    for words in ("step", "<fixture:recompile_limit>:10", "n == 1", "0/1", "n == 0", "recompile_limit", "runs eagerly"):
        assert words in detail["text"], words
    fits = {"cut": [], "wrapped": [], "panelOverflow": 0, "tabsFit": True, "pageHeight": tip["pageHeight"], "paneBarRows": 1}
    assert res[5] == fits

    rows = res[8]
    assert [(r["run"], r["id"]) for r in rows] == [
        ("baseline", "0/0_1"), ("baseline", "1/0_1"), ("baseline", "2/0"), ("baseline", "3/0"),
        ("baseline", "0/1_1"), ("baseline", "3/1"), ("baseline", "0/2"),
        ("nonstrict", "0/0"), ("nonstrict", "0/1"), ("nonstrict", "0/2"),
    ]
    by_id = {(r["run"], r["id"]): r for r in rows}
    assert "recompile" in by_id[("baseline", "0/1_1")]["marks"]
    assert "recompile limit" in by_id[("baseline", "0/2")]["marks"]
    assert by_id[("baseline", "0/0_1")]["marks"] == []
    assert "step" in by_id[("baseline", "0/0_1")]["text"] and "helper" in by_id[("baseline", "1/0_1")]["text"]
    assert res[9] == fits

    assert (res[13]["run"], res[13]["id"]) == ("baseline", "0/1_1")
    assert "n == 0" in res[13]["text"]
    assert res[16] == [["baseline", "0/1_1:dynamo"]]
    assert (res[19]["run"], res[19]["id"]) == ("baseline", "0/1_1")  # the pane's graph is compile 0/1_1
    assert (res[29]["run"], res[29]["id"]) == ("baseline", "1/0_1")  # the break hit compile 1/0 (attempt 1 kept)
    assert (res[24]["run"], res[24]["id"]) == ("baseline", "0/1_1")  # node "mul" of graph 0/1_1:dynamo

    assert res[30] == 670
    assert (res[33]["run"], res[33]["id"]) == ("baseline", "0/2")
    narrow = {**fits, "pageHeight": res[34]["pageHeight"]}
    assert res[34] == narrow and res[37] == narrow
