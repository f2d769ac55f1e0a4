"""Folded blocks and canvas labels, as a person sees them, on a real GPT-2 training step.

The Report is ``tests/fixtures/gpt2_4layer.report.json.gz`` (a real capture of a 4-block GPT-2;
``make_gpt2_fixture.py``), so no ``torch.compile`` runs here. One Chromium session (``driver.py``)
serves every test of the file:

- ATen forward: the four identical blocks ``h.0`` … ``h.3`` are ONE box ``h[0–3] ×4`` (not four),
  fewer boxes are drawn; a click opens it into the four blocks, each its own box.
- ATen backward: the last block differs (it receives ``ln_f``'s gradient), so it stays apart from
  the folded series of the other three.
- Dynamo graph: the labels drawn on the canvas (recorded from ``fillText``) of nodes with
  distinct names are distinct (``..._ln_1_parameters_weight_`` vs ``..._bias_``), and the
  tooltip shows the whole name.
- ATen backward, all expanded: the blocks stack (no sideways drift from long edges' dummies) and
  no group holds an empty horizontal band taller than the gap between two rows.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.helpers.browser_server import run_spec

from .conftest import DRIVER, _need_bundle

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "gpt2_4layer.report.json.gz"
HOOK = "document.querySelector('#nstviz-root').__nstviz"


def _pick(graph_id: str) -> dict:
    """A step choosing a graph in pane 0 through its level and graph pickers (as a person would)."""
    level = graph_id.rsplit(":", 1)[1]
    return {"do": "eval", "js": f"""() => new Promise((r) => {{
  const lv = document.querySelector('select[aria-label="level"]'); lv.value = '{level}'; lv.dispatchEvent(new Event('change'));
  const t0 = performance.now();
  const chk = () => {{
    const gs = document.querySelector('select[aria-label="graph"]');
    if ([...gs.options].some((o) => o.value === '{graph_id}')) {{ gs.value = '{graph_id}'; gs.dispatchEvent(new Event('change')); r(true); }}
    else if (performance.now() - t0 > 8000) r(false); else setTimeout(chk, 30);
  }};
  chk(); }})"""}


def _until(js: str, ms: int = 8000) -> dict:
    """A step that waits until `js` is truthy, at most `ms` (then the test's assertion says what is missing)."""
    return {"do": "eval", "js": f"() => new Promise((r) => {{ const t0 = performance.now(); const f = {js};"
            f" const chk = () => {{ const v = f(); if (v || performance.now() - t0 > {ms}) r(!!v); else setTimeout(chk, 30); }}; chk(); }})"}


def _shown(graph_id: str) -> str:
    return f"() => {{ const p = {HOOK}.panes()[0]; return p.graph === '{graph_id}' && p.groups.length > 0; }}"


# what a person sees: boxes drawn (nodes and collapsed groups), the folded series, the blocks
SEEN = f"""() => {{
  const p = {HOOK}.panes()[0];
  const closed = p.groups.filter((g) => !g.expanded);
  return {{graph: p.graph, boxes: p.nodes.length + closed.length,
    series: p.groups.filter((g) => g.kind === 'series').map((g) => ({{label: g.label, key: g.key, expanded: g.expanded, nodes: g.nodes}})),
    blocks: p.groups.filter((g) => /^\\d+$/.test(g.label)).map((g) => g.label)}};
}}"""

# every canvas keeps the text of its last frame (a frame starts by filling the canvas from 0, 0)
RECORD = """() => {
  const fillText = CanvasRenderingContext2D.prototype.fillText, fillRect = CanvasRenderingContext2D.prototype.fillRect;
  CanvasRenderingContext2D.prototype.fillRect = function (x, y, w, h) {
    if (x === 0 && y === 0 && this.getTransform().a === (window.devicePixelRatio || 1)) this.canvas.__drawn = [];
    return fillRect.call(this, x, y, w, h);
  };
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
    (this.canvas.__drawn = this.canvas.__drawn || []).push({text: String(text), x, y});
    return fillText.call(this, text, x, y, ...rest);
  };
  return true;
}"""

# labels drawn for input nodes (their label is their name): drawn at (box.x + 8, upper half of the box)
LABELS = f"""() => {{
  const p = {HOOK}.panes()[0];
  const drawn = document.querySelector('.nsv-canvas').__drawn || [];
  const out = [];
  for (const n of p.nodes) {{
    if (n.kind !== 'input') continue;
    const t = drawn.find((d) => Math.abs(d.x - (n.x + 8)) < 0.01 && d.y > n.y && d.y < n.y + n.h / 2 + 1);
    if (t) out.push({{name: n.name, label: t.text}});
  }}
  return out;
}}"""


# laid-out geometry of pane 0: the blocks' centres and widths, h's width, and the tallest band
# inside an expanded group (below its 26 px header, above its 14 px padding) that no child reaches
GEOMETRY = f"""() => {{
  const p = {HOOK}.panes()[0];
  const boxes = p.nodes.map((n) => ({{...n, parent: null}})).concat(p.groups);
  const blocks = p.groups.filter((g) => /^\\d+$/.test(g.label));
  const h = p.groups.find((g) => g.label === 'h');
  let band = {{gap: 0}};
  for (const g of p.groups.filter((x) => x.expanded)) {{
    const inside = boxes.filter((b) => b !== g && b.x >= g.x && b.x + b.w <= g.x + g.w + 0.5 && b.y >= g.y && b.y + b.h <= g.y + g.h + 0.5);
    const spans = inside.map((b) => [b.y, b.y + b.h]).sort((a, b) => a[0] - b[0]);
    let end = g.y + 26;
    for (const [s, e] of spans.concat([[g.y + g.h - 14, 0]])) {{ if (s - end > band.gap) band = {{gap: s - end, group: g.label}}; end = Math.max(end, e); }}
  }}
  return {{centres: blocks.map((b) => b.x + b.w / 2), widest: Math.max(...blocks.map((b) => b.w)), h: h ? h.w : null, band}};
}}"""


@pytest.fixture(scope="module")
def results(tmp_path_factory, chromium) -> list:
    _need_bundle()
    from nstviz.render.html import render_html
    from nstviz.report import Report

    tmp = tmp_path_factory.mktemp("fold")
    report = Report.from_json(gzip.decompress(FIXTURE.read_bytes()).decode("utf-8"))
    page = tmp / "gpt2.html"
    page.write_text(render_html(report), encoding="utf-8")
    dynamo = next(g for g in report.runs["baseline"].graphs if g.level == "dynamo" and len(g.nodes) > 100)
    first_hit = next(n.name for n in dynamo.nodes if "ln_1_parameters" in n.name)  # search walks in node order
    art = Path(__file__).resolve().parents[2] / "test-artifacts" / "viewer"
    series_key = "transformer.h\u0000series:transformer.h.0"  # layout/fold.js: "<parent>\\0series:<first block>"
    steps = [
        {"do": "ready"},
        _pick("3/0_1:aten_forward"),
        {"do": "wait_for", "js": _shown("3/0_1:aten_forward")},
        {"do": "eval", "js": SEEN},  # 3: forward, folded
        {"do": "screenshot", "path": str(art / "fold-forward-folded.png")},
        {"do": "click_node", "pane": 0, "name": series_key},  # open the series with a real click
        _until(f"() => {HOOK}.panes()[0].groups.some((g) => g.kind === 'series' && g.expanded)"),
        {"do": "eval", "js": SEEN},  # 7: forward, series opened
        {"do": "screenshot", "path": str(art / "fold-forward-open.png")},
        _pick("3/0_1:aten_backward"),
        {"do": "wait_for", "js": _shown("3/0_1:aten_backward")},
        {"do": "eval", "js": SEEN},  # 11: backward
        _pick("3/0_1:dynamo"),
        {"do": "wait_for", "js": _shown("3/0_1:dynamo")},
        {"do": "eval", "js": RECORD},
        {"do": "fill", "selector": "input.nsv-search", "text": "ln_1_parameters"},
        {"do": "press", "key": "Enter"},
        _until(f"() => {HOOK}.panes()[0].selected && (document.querySelector('.nsv-canvas').__drawn || []).length > 0"),
        {"do": "eval", "js": "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"},
        {"do": "eval", "js": LABELS},  # 19: drawn input labels
        {"do": "eval", "js": f"() => {HOOK}.panes()[0].selected"},  # 20
        {"do": "hover_node", "pane": 0, "name": first_hit},
        {"do": "eval", "js": "() => { const t = document.querySelector('.nsv-tip'); return t && !t.hidden ? t.querySelector('.nsv-tip-title').textContent : null; }"},  # 22
        {"do": "screenshot", "path": str(art / "fold-dynamo-labels.png")},
        {"do": "fill", "selector": "input.nsv-search", "text": ""},
        _pick("3/0_1:aten_backward"),
        {"do": "wait_for", "js": _shown("3/0_1:aten_backward")},
        {"do": "click", "selector": "button[title='expand all groups']"},
        _until(f"() => {HOOK}.panes()[0].groups.every((g) => g.expanded)"),
        {"do": "eval", "js": GEOMETRY},  # 29: backward, all expanded
        {"do": "screenshot", "path": str(art / "fold-backward-all.png")},
    ]
    return _drive(tmp, {"page": str(page), "viewport": [1500, 950], "steps": steps})["results"]


def _drive(tmp: Path, spec: dict) -> dict:
    path = tmp / f"spec-{len(list(tmp.glob('spec-*')))}.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    out = run_spec(DRIVER, path, 180)
    assert not out["errors"], out["errors"]
    assert not out["requests"], out["requests"]
    return out


def test_identical_blocks_are_one_series_box_until_opened(results):
    folded, opened = results[3], results[7]
    assert folded["graph"].endswith("aten_forward")
    assert [s["label"] for s in folded["series"]] == ["h[0–3] ×4"], folded["series"]
    assert not folded["series"][0]["expanded"]
    assert folded["blocks"] == [], "the blocks are inside the folded series, not drawn one by one"
    assert opened["series"][0]["expanded"]
    assert sorted(opened["blocks"], key=int) == ["0", "1", "2", "3"]
    # opening shows the four blocks in place of the one box
    assert opened["boxes"] == folded["boxes"] - 1 + 4, (folded["boxes"], opened["boxes"])


def test_a_block_that_differs_is_not_folded_with_the_others(results):
    back = results[11]
    assert back["graph"].endswith("aten_backward")
    assert [s["label"] for s in back["series"]] == ["h[0–2] ×3"], back["series"]
    assert back["blocks"] == ["3"], "h.3 (first in the backward, after ln_f) differs: shown on its own"


def test_drawn_labels_of_distinct_names_are_distinct_and_tooltip_has_the_name(results):
    drawn = results[19]
    names = [d["name"] for d in drawn]
    assert any(n.endswith("ln_1_parameters_weight_") for n in names) and any(n.endswith("ln_1_parameters_bias_") for n in names), names
    by_label: dict[str, set[str]] = {}
    for d in drawn:
        by_label.setdefault(d["label"], set()).add(d["name"])
    same = {label: sorted(ns) for label, ns in by_label.items() if len(ns) > 1}
    assert not same, f"distinct inputs drawn with the same label: {same}"
    assert results[22] == results[20], "the tooltip shows the whole name"


def test_backward_blocks_stack_without_drift_or_empty_bands(results):
    geo = results[29]
    centres = geo["centres"]
    assert len(centres) == 4, geo
    # long edges into h's output port used to push each next block aside (a staircase)
    assert max(centres) - min(centres) <= 40, f"block centres drift: {[round(c) for c in centres]}"
    assert geo["h"] <= geo["widest"] + 120, geo
    # no empty horizontal band inside a group taller than the gap between two rows (30 px)
    assert geo["band"]["gap"] <= 30, geo["band"]
