"""The viewer in real Chromium: a real captured Report, a synthetic big one, bad input, safety."""

from __future__ import annotations

import json

import pytest
import torch

from nstviz.passes.assemble import build_report
from nstviz.report import Report

pytestmark = pytest.mark.browser

HOOK = "document.querySelector('#nstviz-root').__nstviz"


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def stats(self, x):
        torch._dynamo.graph_break()
        return x.sin() * 2 + x.cos()

    def forward(self, x):
        return self.lin(self.stats(self.lin(x))).relu()


@pytest.fixture(scope="module")
def real_report(real_report_json) -> Report:
    return Report.from_json(real_report_json)


def _inlined(report: Report, run: str, graph: str) -> set[str]:
    names: set[str] = set()
    for region in report.runs[run].regions:
        names.update(region.nodes.get(graph, ()))
    return names


def test_real_report_highlights_clicks_search_and_break(real_report, write_page, drive, artifacts):
    r = real_report
    page = write_page(r)
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": f"{HOOK}.panes()"},
        {"do": "eval", "js": "document.querySelector('[data-testid=headline]').textContent"},
        {"do": "screenshot", "path": str(artifacts / "real-initial.png")},
        {"do": "click", "selector": "button[title='expand all groups']"},
        {"do": "eval", "js": f"{HOOK}.panes()[0]"},
    ]})
    assert out["errors"] == [] and out["requests"] == [] and out["dialogs"] == 0
    panes, headline, _, expanded = out["results"][1], out["results"][2], out["results"][3], out["results"][5]
    pane = panes[0]
    assert pane["run"] == "nonstrict"
    assert "1 break → 0" in headline and "4 graphs → 1" in headline and "outputs match" in headline
    graph = r.runs[pane["run"]]
    gnodes = next(g for g in graph.graphs if g.id == pane["graph"]).nodes
    # fully expanded: every node drawn, highlighted exactly the Report's inlined nodes
    assert len(expanded["nodes"]) == len(gnodes)
    highlighted = {n["name"] for n in expanded["nodes"] if n["highlighted"]}
    expected = _inlined(r, pane["run"], pane["graph"])
    assert expected, "the capture found inlined nodes"
    assert highlighted == expected
    region_of = {n.name: n.region for n in gnodes}
    assert all(n["region"] == region_of[n["name"]] for n in expanded["nodes"])

    target = sorted(expected)[0]
    bad = r.runs["baseline"].breaks[0]
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button[title='expand all groups']"},
        {"do": "click_node", "pane": 0, "name": target},
        {"do": "eval", "js": f"{HOOK}.state().selectedNode"},
        {"do": "eval", "js": "document.querySelector('.nsv-details') && document.querySelector('.nsv-details').textContent"},
        {"do": "screenshot", "path": str(artifacts / "real-node-selected.png")},
        {"do": "fill", "selector": ".nsv-search", "text": "op:placeholder"},
        {"do": "eval", "js": f"{HOOK}.panes()[0].hits"},
        {"do": "press", "key": "Enter"},
        {"do": "eval", "js": f"{HOOK}.state().selectedNode"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=breaks]"},
        {"do": "click", "selector": ".nsv-break[data-run=baseline][data-index='0'] .nsv-break-head"},
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.state().selectedBreak, {HOOK}.mode(), {HOOK}.panes().map(p => [p.run, p.graph])]"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-src-row.nsv-l-focus')].map(e => e.dataset.line)"},
        {"do": "screenshot", "path": str(artifacts / "real-break-selected.png")},
    ]})
    assert out["errors"] == []
    res = out["results"]
    assert res[3] == {"run": pane["run"], "graph": pane["graph"], "node": target}
    assert target in res[4] and "non-strict region" in res[4]
    placeholders = [n.name for n in gnodes if n.op == "placeholder"]
    assert res[7] == placeholders
    assert res[9]["node"] == placeholders[0]
    sel_break, mode, shown = res[13]
    assert sel_break == {"run": "baseline", "index": 0}
    expected_graphs = [g for g in (bad.graph_before, bad.graph_after) if g]
    if expected_graphs:
        assert [s[0] for s in shown] == ["baseline"] * len(shown)
        assert mode == ("side_by_side" if len(expected_graphs) == 2 else "single")
    if bad.location.file in r.sources:
        assert res[14] == [str(bad.location.line)]


@pytest.mark.slow
def test_big_synthetic_collapsed_expand_search(synthetic_2k, write_page, drive, artifacts):
    r = synthetic_2k
    page = write_page(r)
    graph = r.runs["nonstrict"].graphs[-1]
    first = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": f"{HOOK}.panes()[0]"},
        {"do": "screenshot", "path": str(artifacts / "synthetic-2k-initial.png")},
    ]})["results"][1]
    assert first["graph"] == graph.id and first["totalNodes"] == len(graph.nodes)
    # collapsed by module: far fewer boxes than nodes at first
    assert len(first["nodes"]) + len(first["groups"]) < 500
    cam, size = first["camera"], first["canvas"]

    def on_screen(g):
        x, y = (g["x"] + g["w"] / 2) * cam["k"] + cam["tx"], (g["y"] + 10) * cam["k"] + cam["ty"]
        return 0 < x < size["w"] and 0 < y < size["h"]

    collapsed = [g for g in first["groups"] if not g["expanded"] and g["kind"] in ("module", "series") and on_screen(g)]
    assert collapsed
    key = collapsed[len(collapsed) // 2]["key"]
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "click_node", "pane": 0, "name": key},
        {"do": "eval", "js": f"{HOOK}.panes()[0]"},
        {"do": "fill", "selector": ".nsv-search", "text": "module:transformer.h.7.mlp gelu"},
        {"do": "press", "key": "Enter"},
        {"do": "eval", "js": f"[{HOOK}.panes()[0].hits, {HOOK}.state().selectedNode, {HOOK}.timings()]"},
        {"do": "screenshot", "path": str(artifacts / "synthetic-2k-search.png")},
        {"do": "click", "selector": "button[title='expand all groups']"},
        {"do": "eval", "js": f"{HOOK}.panes()[0]"},
        {"do": "click", "selector": "button.nsv-seg-btn[data-mode=merged]"},
        {"do": "ready"},
        {"do": "screenshot", "path": str(artifacts / "synthetic-2k-merged.png")},
        {"do": "eval", "js": "document.querySelector('.nsv-legend').textContent"},
    ]})
    assert out["errors"] == []
    res = out["results"]
    after = next(g for g in res[2]["groups"] if g["key"] == key)
    assert after["expanded"]
    hits, selected, _timings = res[5]
    expected = [n.name for n in graph.nodes if n.module == "transformer.h.7.mlp" and "gelu" in n.target]
    assert hits == expected and selected["node"] == expected[0]
    full = res[8]
    assert len(full["nodes"]) == len(graph.nodes)
    assert {n["name"] for n in full["nodes"] if n["highlighted"]} == _inlined(r, "nonstrict", graph.id)
    assert "Baseline graph" in res[12] and "0/0:aten_inference" in res[12]


@pytest.mark.parametrize(("label", "text", "message"), [
    ("corrupt", '{"schema_version": 1, "runs": {"baseline": ', "not valid JSON"),
    ("newer", json.dumps({"schema_version": 99, "runs": {}}), "newer than this viewer"),
    ("not-a-report", '["x"]', "not an nstviz Report"),
])
def test_bad_report_shows_clear_message(label, text, message, synthetic_2k, write_page, drive, artifacts):
    page = write_page(synthetic_2k, name=f"{label}.html", json_text=text)
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.error(), document.querySelectorAll('canvas').length, document.querySelectorAll('.nsv-break').length]"},
        {"do": "screenshot", "path": str(artifacts / f"bad-{label}.png")},
    ]})
    err, canvases, breaks = out["results"][1]
    assert message in err
    assert canvases == 0 and breaks == 0
    assert out["errors"] == []


def test_hostile_strings_stay_text(write_page, drive, artifacts):
    from make_synthetic_report import HOSTILE, make_report

    r = make_report(300, hostile=True)
    page = write_page(r, name="hostile.html")
    svg = page.with_suffix(".svg")
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button[title='expand all groups']"},
        {"do": "download", "selector": "button[title='export the current graph view as SVG']", "path": str(svg)},
        {"do": "fill", "selector": ".nsv-search", "text": "hostile_const"},
        {"do": "press", "key": "Enter"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=breaks]"},
        {"do": "click", "selector": ".nsv-break[data-run=baseline][data-index='0'] .nsv-break-head"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=source]"},
        {"do": "eval", "js": "[window.__pwned || null, document.querySelectorAll('#nstviz-root img, #nstviz-root b, #nstviz-root script').length,"
                             " [...document.querySelectorAll('#nstviz-root a[href]')].map(a => a.getAttribute('href')),"
                             " document.querySelector('#nstviz-root').textContent]"},
        {"do": "screenshot", "path": str(artifacts / "hostile.png")},
    ]})
    pwned, injected, hrefs, text = out["results"][8]
    assert pwned is None and injected == 0 and out["dialogs"] == 0
    assert all(h.startswith("https://") for h in hrefs)
    assert "javascript:alert(1)" in text  # shown as text (the hint), not as a link
    assert HOSTILE.split("\u2028")[0] in text
    # the node details show the hostile constant as text; the SVG export keeps it text
    assert "hostile_const" in text and "onerror" in text
    import xml.etree.ElementTree as ET

    root = ET.parse(svg).getroot()
    tags = {el.tag.split("}")[-1] for el in root.iter()}
    assert tags <= {"svg", "rect", "text", "path", "g", "title"}, tags
    assert any(HOSTILE.split("\u2028")[0][:20] in (t.text or "") for t in root.iter("{http://www.w3.org/2000/svg}text"))


def test_tooltip_and_svg_png_export(write_page, drive, artifacts, tmp_path):
    import xml.etree.ElementTree as ET

    from make_synthetic_report import LINE, make_report

    page = write_page(make_report(300), name="small.html")
    svg, png = tmp_path / "view.svg", tmp_path / "view.png"
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "hover_node", "pane": 0, "name": "embedding", "settle_ms": 150},
        {"do": "eval", "js": "(() => { const t = document.querySelector('.nsv-tip'); return [t.hidden, t.textContent]; })()"},
        {"do": "screenshot", "path": str(artifacts / "tooltip.png")},
        {"do": "download", "selector": "button[title='export the current graph view as SVG']", "path": str(svg)},
        {"do": "download", "selector": "button[title='export the current graph view as PNG']", "path": str(png)},
    ]})
    assert out["errors"] == []
    hidden, tip = out["results"][2]
    assert not hidden
    assert "embedding" in tip and "transformer.wte" in tip and "f32[2, 16, 64]" in tip and f"model.py:{LINE['wte']}" in tip
    root = ET.parse(svg).getroot()
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert "embedding" in texts
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_standalone_export_html_downloads_a_working_page(write_page, drive, tmp_path):
    from make_synthetic_report import make_report

    page = write_page(make_report(300), name="export-src.html")
    saved = tmp_path / "exported.html"
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button.nsv-seg-btn[data-mode=side_by_side]"},
        {"do": "download", "selector": "button[title='Save this report as one self-contained HTML file']", "path": str(saved)},
    ]})
    assert out["errors"] == []
    text = saved.read_text(encoding="utf-8")
    assert 'id="nstviz-report"' in text and 'class="nsv-pane' not in text  # the page as written, not the rendered DOM
    again = drive({"page": str(saved), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.error(), {HOOK}.panes().length, document.querySelector('[data-testid=headline]').textContent]"},
    ]})
    assert again["errors"] == [] and again["requests"] == []
    err, panes, headline = again["results"][1]
    assert err is None and panes == 1 and "breaks" in headline
    assert not [c for c in again["console"] if "Content Security Policy" in c]


def test_sparse_reports_render_without_errors(write_page, drive, artifacts):
    """Reports with little in them: a fatal baseline with no graph, no sources, no counts."""
    from nstviz.report import Break, Graph, Location, Node, Run

    loc = Location(file="<cell>", line=3, function="f")
    fatal = Break(gb_id="GB0025", reason="graph_break() under fullgraph=True", count=1, fatal=True, location=loc)
    graph = Graph(id="0/0:dynamo", level="dynamo", frame_id=0, compile_id=0, nodes=(
        Node(name="x", op="placeholder", target="x"),
        Node(name="sin", op="call_function", target="torch.sin", inputs=("x",), stack=7),  # stack index out of range
        Node(name="output", op="output", target="output", inputs=("sin", "ghost")),  # dangling input
    ))
    reports = {
        "fatal-baseline": build_report(torch_version="2.13.0", runs={
            "baseline": Run(name="baseline", breaks=(fatal,), error="Unsupported: graph_break", error_type="Unsupported"),
            "nonstrict": Run(name="nonstrict", graphs=(graph,)),
        }),
        "baseline-only-empty": build_report(torch_version="2.13.0", runs={"baseline": Run(name="baseline")}),
    }
    for label, report in reports.items():
        page = write_page(report, name=f"{label}.html")
        out = drive({"page": str(page), "steps": [
            {"do": "ready"},
            {"do": "eval", "js": f"[{HOOK}.error(), document.querySelector('[data-testid=headline]').textContent, {HOOK}.panes().map(p => p.nodes.length)]"},
            {"do": "click", "selector": "button.nsv-tab[data-tab=breaks]"},
            {"do": "screenshot", "path": str(artifacts / f"sparse-{label}.png")},
        ]})
        assert out["errors"] == [], (label, out["errors"])
        err, headline, drawn = out["results"][1]
        assert err is None, (label, err)
        assert "outputs not checked" in headline
        if label == "fatal-baseline":
            assert "1 break → 0" in headline and drawn == [3]
        else:
            assert drawn == [0]


PIXEL = ("(() => { const c = document.querySelector('.nsv-canvas'); const x = c.getContext('2d');"
         " const d = x.getImageData(3, 3, 1, 1).data; return [d[0], d[1], d[2]]; })()")


def test_dark_theme_and_narrow_width(write_page, drive, artifacts):
    from make_synthetic_report import make_report

    page = write_page(make_report(300), name="themes.html")
    dark = drive({"page": str(page), "color_scheme": "dark", "steps": [
        {"do": "ready"},
        {"do": "eval", "js": PIXEL},
        {"do": "screenshot", "path": str(artifacts / "dark.png")},
    ]})
    r, g, b = dark["results"][1]
    assert r + g + b < 3 * 80, "the canvas follows the dark theme"
    narrow = drive({"page": str(page), "viewport": [540, 900], "steps": [
        {"do": "ready"},
        {"do": "eval", "js": PIXEL},
        {"do": "eval", "js": "(() => { const s = document.querySelector('.nsv-side').getBoundingClientRect();"
                             " const m = document.querySelector('.nsv-main').getBoundingClientRect(); return [s.top >= m.bottom - 1, m.width]; })()"},
        {"do": "screenshot", "path": str(artifacts / "narrow.png")},
    ]})
    r, g, b = narrow["results"][1]
    assert r + g + b > 3 * 200, "light by default"
    below, main_width = narrow["results"][2]
    # a ~670 px widget keeps the side panel beside the graph (tests/viewer/test_readable.py); a phone-narrow one stacks
    assert below and main_width > 500, "at a phone-narrow width the panels go under the graph, which keeps the full width"
    assert dark["errors"] == [] and narrow["errors"] == []


SEED_CELL = '''
import sys
import zlib
import torch

def get_magic_num():
    return torch.tensor([float(zlib.crc32(b"nstviz") % 97)])

@torch.compile(fullgraph=True)
def func(x):
    return x + get_magic_num()

print("hello from the cell </script><img src=x onerror=alert(1)>")
print("to stderr", file=sys.stderr)
z = func(torch.rand(10))
'''


def _pane_brief(clicked: dict | None) -> dict | None:
    """A failed node click, short enough to read in a CI log: where it landed, what the pane drew."""
    if not clicked:
        return clicked
    pane = clicked.get("pane") or {}
    brief = {k: v for k, v in clicked.items() if k != "pane"}
    brief["pane"] = {k: v for k, v in pane.items() if not isinstance(v, list)}
    brief["pane"]["nodes"] = [n.get("name") for n in pane.get("nodes", [])][:40]
    return brief


def test_seed_example_headline_and_output_tab(write_page, drive, artifacts):
    import nstviz

    rows_js = ("[...document.querySelectorAll('.nsv-details .nsv-kv-wide dt')].map(dt => { const dd = dt.nextElementSibling;"
               " const a = dt.getBoundingClientRect(), b = dd.getBoundingClientRect(), box = dt.closest('.nsv-tab-body').getBoundingClientRect();"
               " return [dt.textContent, a.right <= b.left + 0.5, b.right <= box.right + 0.5, a.right <= box.right + 0.5]; })")

    r = nstviz.trace_code(SEED_CELL, {}, nonstrict=["get_magic_num"])
    assert "hello from the cell" in r.runs["nonstrict"].stdout
    page = write_page(r, name="seed.html")
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": "[...document.querySelectorAll('#nstviz-root .nsv-hl')].map(e => [e.textContent, e.className])"},
        {"do": "screenshot", "path": str(artifacts / "seed-headline.png")},
        {"do": "click", "selector": "button.nsv-tab[data-tab=output]"},
        {"do": "eval", "js": "[...document.querySelectorAll('#nstviz-root .nsv-out-run')].map(s => [s.dataset.run,"
                             " [...s.querySelectorAll('pre')].map(p => [p.dataset.kind, p.textContent])])"},
        {"do": "eval", "js": "[window.__pwned || null, document.querySelectorAll('#nstviz-root img, #nstviz-root script').length,"
                             " !!document.querySelector('#nstviz-root .nsv-tab-body[data-tab=output]:not([hidden]) pre')]"},
        {"do": "screenshot", "path": str(artifacts / "output-tab.png")},
        {"do": "click_node", "name": "lift_fresh_copy"},
        {"do": "eval", "js": rows_js},
        {"do": "screenshot", "path": str(artifacts / "node-details.png")},
    ]})
    assert not out["errors"], out["errors"]
    headline = out["results"][1]
    texts = [t for t, _ in headline]
    assert "fullgraph failed → 1 graph" in texts, headline
    assert not any("nsv-hl-bad" in c for _, c in headline), headline
    runs = dict(out["results"][4])
    assert list(runs)[:2] == ["baseline", "nonstrict"]
    ns = dict(runs["nonstrict"])
    assert "hello from the cell </script><img src=x onerror=alert(1)>" in ns["stdout"]
    assert "to stderr" in ns["stderr"]
    pwned, injected, visible = out["results"][5]
    assert pwned is None and injected == 0 and out["dialogs"] == 0 and visible
    clicked = out["results"][7]
    assert clicked and clicked["at"] == "canvas.nsv-canvas" and clicked["selected"], _pane_brief(clicked)
    rows = out["results"][8]
    assert {"original_aten", "from Dynamo node"} <= {r[0] for r in rows}, rows
    assert all(all(r[1:]) for r in rows), [r for r in rows if not all(r[1:])]  # labels never overlap values
    # a label and a value with no break opportunity still stay in their columns, inside the pane
    data = json.loads(r.to_json())
    graph = next(g for g in data["runs"]["nonstrict"]["graphs"] if g["level"] != "dynamo")
    node = next(n for n in graph["nodes"] if n["name"] == "lift_fresh_copy")
    node["extra"] = {**node.get("extra", {}), "original_aten_" + "x" * 60: "aten." + "y" * 200}
    page = write_page(r, name="seed-long.html", json_text=json.dumps(data).replace("<", "\\u003c"))
    out = drive({"page": str(page), "steps": [
        {"do": "ready"}, {"do": "click_node", "name": "lift_fresh_copy"}, {"do": "eval", "js": rows_js},
    ]})
    rows = out["results"][2]
    assert len(rows) >= 9 and all(all(r[1:]) for r in rows), [r for r in rows if not all(r[1:])]


def test_notebook_cells_are_shown_as_ipython_names_them(write_page, drive):
    """A break in a notebook cell reads 'Cell In[3], line 4' in the list, its stack and the source pane."""
    from nstviz.report import Break, Graph, Location, Node, Run, SourceFile, break_id

    cell3 = Location(file="Cell In[3]", line=4, function="helper", code="torch._dynamo.graph_break()")
    cell4 = Location(file="Cell In[4]", line=3, function="fn", code="return helper(x) + 1")
    reason = "Call to `torch._dynamo.graph_break()`"
    brk = Break(id=break_id(cell3, "GB0025", reason), gb_id="GB0025", reason=reason, count=1, fatal=False,
                location=cell3, stack=(cell4, cell3))
    graph = Graph(id="0/0:dynamo", level="dynamo", frame_id=0, compile_id=0,
                  nodes=(Node(name="x", op="placeholder", target="x"), Node(name="output", op="output", target="output")))
    text3 = "import torch\n\ndef helper(x):\n    torch._dynamo.graph_break()\n    return x * 2\n"
    report = build_report(
        torch_version="2.13.0",
        runs={"baseline": Run(name="baseline", graphs=(graph,), breaks=(brk,))},
        sources={"Cell In[3]": SourceFile(path="Cell In[3]", text=text3),
                 "Cell In[4]": SourceFile(path="Cell In[4]", text="%%nstrace\ndef fn(x):\n    return helper(x) + 1\n")},
    )
    report.validate()
    page = write_page(report, name="cells.html")
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=breaks]"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-break-meta button, .nsv-stack button')].map(b => b.textContent)"},
        {"do": "click", "selector": ".nsv-break-meta button.nsv-linkish"},
        {"do": "eval", "js": "[document.querySelector('.nsv-tab-body[data-tab=source] select').selectedOptions[0].textContent,"
                             " [...document.querySelector('.nsv-tab-body[data-tab=source] select').options].map(o => o.textContent)]"},
    ]})
    assert out["results"][2] == ["Cell In[3], line 4", "Cell In[4], line 3", "Cell In[3], line 4"]
    assert out["results"][4] == ["Cell In[3]", ["Cell In[3]", "Cell In[4]"]]


def _unfixable(x):
    y = x.sin()
    if y.sum() > 0:  # a branch on a value, one side returning no tensor: nothing removes this break
        return y.cos()
    return None


def test_nothing_marked_report_has_no_nonstrict_run_and_says_so(write_page, drive, artifacts):
    """A real capture where nothing is marked (the advisor recommended nothing): baseline only."""
    import torch

    import nstviz

    report = nstviz.compare(_unfixable, torch.ones(3), auto=True, backend="aot_eager")
    # the compiled function itself (issue 25: as @torch.compile over @nonstrict_trace) and two
    # rewrites of the branch are tried, in attempts kept for the Advisor tab; none helps, so
    # nothing is recommended and no nonstrict run is made
    assert next(iter(report.runs)) == "baseline" and "nonstrict" not in report.runs, list(report.runs)
    assert report.recommendation is None and {c.status for c in report.candidates} == {"failed"}
    page = write_page(report, name="nothing-marked.html")
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.error(), document.querySelector('[data-testid=headline]').textContent]"},
        {"do": "eval", "js": "[[...document.querySelectorAll('.nsv-break')].map(e => [e.dataset.status,"
                             " e.querySelector('.nsv-chip').textContent]),"
                             " [...document.querySelectorAll('.nsv-notes li')].map(e => e.textContent)]"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=advisor]"},
        {"do": "eval", "js": "[[...document.querySelectorAll('.nsv-cand-kind')].map(e => e.textContent),"
                             " document.querySelector('.nsv-no-rec').textContent]"},
        {"do": "screenshot", "path": str(artifacts / "nothing-marked.png")},
    ]})
    assert out["errors"] == []
    err, headline = out["results"][1]
    assert err is None
    assert headline == "nothing was marked (baseline only)1 break2 graphsoutputs match eager"
    breaks, notes = out["results"][2]
    # as it is: no diff status ("remaining") without a second run (the attempt's own break listed too)
    assert breaks and all(b[0] == "none" and b[1] in ("break", "fatal") for b in breaks), breaks
    assert any(n.startswith("Nothing was marked") for n in notes), notes
    kinds, no_rec = out["results"][4]
    assert kinds[0] == "nonstrict"
    assert no_rec == ("No recommendation: no candidate reduced the breaks with matching outputs, "
                      "so nothing was marked and the nonstrict run was not made.")


def _timed(x):
    torch_mod = __import__("torch")
    torch_mod._dynamo.graph_break()
    return x.cos() + 1


def _timed_toy(x):
    return _timed(x.sin()) * 2


def test_timing_table_and_bars_from_a_real_compare(write_page, drive, artifacts):
    """compare() times its runs: the overview tab shows one row per run, with the Report's texts and a bar."""
    import torch

    import nstviz

    r = nstviz.compare(_timed_toy, torch.ones(8), nonstrict=[_timed])
    page = write_page(r, name="timing.html")
    out = drive({"page": str(page), "steps": [
        {"do": "ready"},
        {"do": "click", "selector": "button.nsv-tab[data-tab=overview]"},
        {"do": "eval", "js": "[...document.querySelectorAll('#nstviz-root [data-testid=timing] [data-run]')].map(tr =>"
                             " [tr.dataset.run, ['run', 'graphs', 'compile', 'steady', 'eager'].map(k => tr.querySelector(`[data-k=${k}]`).textContent),"
                             " tr.querySelector('svg rect') ? tr.querySelector('svg rect').getBoundingClientRect().width : 0,"
                             " tr.querySelectorAll('svg line').length])"},
        {"do": "screenshot", "path": str(artifacts / "timing-table.png")},
    ]})
    assert not out["errors"], out["errors"]
    rows = out["results"][2]
    assert [row[0] for row in rows] == ["baseline", "nonstrict"]
    for name, cells, bar_width, lines in rows:
        timing = r.runs[name].timing
        assert timing is not None and timing.steady is not None and timing.eager is not None
        assert cells == [name, str(timing.graphs), timing.compile_text, timing.steady.text, timing.eager.text]
        assert bar_width > 0 and lines == 2  # the median's bar, the quartile whisker and eager's tick
