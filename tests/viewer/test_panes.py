"""What a person sees of the graph panes in the standalone page, measured in Chromium.

One driver session per window size walks the training-step fixture (two runs, three levels,
breaks with graphs on either side): panes per mode after every switch and back and after a
click on a break, page fit, the level picker, and search across both panes and all graphs of
a run. A second session on a 2k-node synthetic Report checks the minimap (hideable, never
over the fitted graph). The tests read the sessions' outputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser_server import run_spec

from .conftest import ARTIFACTS, DRIVER, _need_bundle

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "training_step.report.json"
SIZES = [(1500, 950), (1100, 800)]
NARROW = (670, 800)  # a ~670 px wide widget (JupyterLab with its file browser open), in a 1100x800 window

# what a person sees: panes shown (laid out, taller than 40 px), the mode button pressed,
# the page's and the document's scroll state
STATE = """() => {
  const vis = [...document.querySelectorAll('#nstviz-root .nsv-pane')]
    .filter((p) => p.offsetParent && p.getBoundingClientRect().height > 40);
  const host = document.querySelector('#nstviz-root .nsv-panes');
  const pressed = document.querySelector('#nstviz-root .nsv-seg-btn[aria-pressed="true"]');
  const maps = [...document.querySelectorAll('#nstviz-root .nsv-minimap')].filter((m) => m.offsetParent);
  return {visible: vis.length, heights: vis.map((p) => Math.round(p.getBoundingClientRect().height)),
    host: Math.round(host.getBoundingClientRect().height), mode: pressed && pressed.dataset.mode,
    minimaps: maps.length, scrollH: document.documentElement.scrollHeight, innerH: innerHeight,
    scrollY: Math.round(scrollY), docTop: document.scrollingElement.scrollTop};
}"""
READY = "() => document.querySelector('#nstviz-root').dataset.nstvizReady === '1'"
SEARCH = """() => {
  const sn = document.querySelector('#nstviz-root').__nstviz;
  const panes = sn.panes();
  // a node of Side by side's stacked baseline is named "<its graph>·<name>": report its own graph
  const own = (p) => p.graph.startsWith('stack:') && p.selected.includes('·') ? p.selected.split('·') : [p.graph, p.selected];
  const sel = panes.map((p) => p.selected ? [p.run, ...own(p)] : null).filter(Boolean);
  const c = document.querySelector('#nstviz-root .nsv-search-count');
  const box = document.querySelector('#nstviz-root .nsv-search');
  return {count: c.textContent, selected: sel[0] || null, graphs: panes.map((p) => p.graph),
    countClipped: c.scrollWidth > c.clientWidth + 1 || c.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(c).lineHeight),
    boxWidth: Math.round(box.getBoundingClientRect().width)};
}"""


def _pick(select: str, value: str) -> dict[str, Any]:
    """Choose `value` in a pane's picker as a person does (change event), then wait."""
    return {"do": "eval", "js": f"""() => {{
      const s = document.querySelector('#nstviz-root .nsv-pane[data-side="left"] select[aria-label="{select}"]');
      s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change', {{bubbles: true}})); return s.value; }}"""}


def _mode(m: str) -> list[dict[str, Any]]:
    return [{"do": "click", "selector": f'#nstviz-root button[data-mode="{m}"]'},
            {"do": "wait_for", "js": READY}, {"do": "eval", "js": STATE}]


MODES = ["side_by_side", "merged", "single", "side_by_side", "single", "merged", "side_by_side", "merged"]


def _run(spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    path = tmp / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    out = run_spec(DRIVER, path, 240)
    assert out["errors"] == [], out["errors"]
    return out


@pytest.fixture(scope="module", params=[*SIZES, NARROW], ids=lambda s: "670px-container" if s == NARROW else f"{s[0]}x{s[1]}")
def session(request, tmp_path_factory) -> dict[str, Any]:
    """Walk the training-step fixture at one window size; returns labelled results."""
    _need_bundle()
    from nstviz.render.html import render_html
    from nstviz.report import Report

    w, h = request.param
    tmp = tmp_path_factory.mktemp(f"panes{w}")
    page = tmp / "ts.html"
    page.write_text(render_html(Report.from_json(FIXTURE.read_text(encoding="utf-8"))), encoding="utf-8")
    labels: list[str] = []
    steps: list[dict[str, Any]] = []

    def add(label: str, *s: dict[str, Any]) -> None:
        for st in s:
            steps.append(st)
            labels.append(label)

    add("ready", {"do": "ready"})
    if request.param == NARROW:
        add("narrow", {"do": "eval", "js": "() => { document.querySelector('#nstviz-root').style.width = '670px'; }"},
            {"do": "wait_for", "js": "() => document.querySelector('#nstviz-root .nsv-canvas').getBoundingClientRect().width < 680"})
    add("start", {"do": "eval", "js": STATE})
    for k, m in enumerate(MODES):
        add(f"mode{k}:{m}", *_mode(m))
    # a click on a break, in each mode
    add("tab", {"do": "click", "selector": '#nstviz-root .nsv-tab[data-tab="breaks"]'})
    for m in ("single", "side_by_side", "merged"):
        add(f"pre-break:{m}", *_mode(m))
        add(f"break:{m}", {"do": "click", "selector": "#nstviz-root .nsv-break-head", "settle_ms": 200},
            {"do": "wait_for", "js": READY}, {"do": "eval", "js": STATE})
    add("break-shot", {"do": "screenshot", "path": str(ARTIFACTS / f"panes-break-{w}x{h}.png")})
    # the level picker keeps the compile id
    add("lv", *_mode("single"))
    add("lv", _pick("run", "baseline"), {"do": "wait_for", "js": READY})
    for start, level in (("4/0:aten_forward", "aten_backward"), ("1/0_1:aten_forward", "aten_backward"),
                         ("3/0:aten_backward", "dynamo"), ("5/0_1:dynamo", "aten_forward")):
        add("lv", _pick("level", start.split(":")[1]), {"do": "wait_for", "js": READY},  # its level lists it
            _pick("graph", start), {"do": "wait_for", "js": READY})
        add(f"level:{start}>{level}", _pick("level", level), {"do": "wait_for", "js": READY},
            {"do": "eval", "js": "() => document.querySelector('#nstviz-root').__nstviz.panes()[0].graph"})
    # search across both panes and every graph of a run, at the level shown
    add("s", *_mode("single"), _pick("run", "nonstrict"), {"do": "wait_for", "js": READY}, _pick("level", "aten_forward"),
        {"do": "wait_for", "js": READY}, *_mode("side_by_side"))
    add("search-fill", {"do": "fill", "selector": "#nstviz-root .nsv-search", "text": "addmm", "settle_ms": 300},
        {"do": "wait_for", "js": "() => /match/.test(document.querySelector('#nstviz-root .nsv-search-count').textContent)"},
        {"do": "eval", "js": SEARCH})
    for k in range(5):
        add(f"search-enter{k}", {"do": "press", "key": "Enter", "settle_ms": 250}, {"do": "wait_for", "js": READY},
            {"do": "eval", "js": SEARCH})
    add("search-shot", {"do": "screenshot", "path": str(ARTIFACTS / f"panes-search-{w}x{h}.png")})
    add("search-back", {"do": "press", "key": "Shift+Enter", "settle_ms": 250}, {"do": "wait_for", "js": READY},
        {"do": "eval", "js": SEARCH})
    out = _run({"page": str(page), "viewport": [1100, 800] if request.param == NARROW else [w, h], "steps": steps}, tmp)
    res: dict[str, list[Any]] = {}
    for label, r in zip(labels, out["results"], strict=True):
        res.setdefault(label, []).append(r)
    return {k: v[-1] for k, v in res.items()}


def _expected(mode: str | None) -> int:
    return 2 if mode == "side_by_side" else 1


def test_page_fits_the_window(session) -> None:
    s = session["start"]
    assert s["scrollH"] <= s["innerH"], f"page {s['scrollH']} px tall in a {s['innerH']} px window"


def test_panes_per_mode_after_every_switch_and_back(session) -> None:
    for k, m in enumerate(MODES):
        s = session[f"mode{k}:{m}"]
        assert s["mode"] == m
        assert s["visible"] == _expected(m), f"{m} (switch {k}): {s['visible']} panes {s['heights']}"
        # the pane(s) take the whole height of the graph area (no dead pane sharing it)
        assert max(s["heights"]) >= 0.9 * s["host"] or s["visible"] == 2, s
        assert s["minimaps"] <= s["visible"]


def test_a_break_click_in_each_mode_shows_one_or_two_panes_and_does_not_scroll_the_page(session) -> None:
    for m in ("single", "side_by_side", "merged"):
        s = session[f"break:{m}"]
        assert s["visible"] == _expected(s["mode"]) and s["visible"] <= 2, f"after a break in {m}: {s}"
        assert s["scrollY"] == 0 and s["docTop"] == 0, f"the page scrolled after a break in {m}: {s}"
        assert s["scrollH"] <= s["innerH"], s


def test_level_picker_keeps_the_compile_id(session) -> None:
    got = {k.split(":", 1)[1]: v for k, v in session.items() if k.startswith("level:")}
    assert got == {
        "4/0:aten_forward>aten_backward": "4/0:aten_backward",
        "1/0_1:aten_forward>aten_backward": "1/0_1:aten_backward",
        "3/0:aten_backward>dynamo": "3/0:dynamo",
        "5/0_1:dynamo>aten_forward": "5/0_1:aten_forward",
    }


def _addmm_matches() -> set[tuple[str, str, str]]:
    """Nodes whose name or target holds "addmm", in every ATen forward graph of both runs."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    out = set()
    for run, r in data["runs"].items():
        for g in r["graphs"]:
            if g["level"] == "aten_forward":
                out |= {(run, g["id"], n["name"]) for n in g["nodes"] if "addmm" in f"{n['name']} {n.get('target', '')}".lower()}
    return out


def test_search_walks_every_match_of_both_panes_and_all_graphs(session) -> None:
    want = _addmm_matches()
    n, m = len(want), len({(r, g) for r, g, _ in want})
    assert m >= 3 and n >= 3
    first = session["search-fill"]
    assert f"{n} matches" in first["count"] and f"in {m} graphs" in first["count"], first
    seen = []
    for k in range(5):
        s = session[f"search-enter{k}"]
        assert s["selected"], s
        seen.append(tuple(s["selected"]))
        pos = (k % n) + 1
        assert s["count"] == f"{pos} / {n} in {m} graphs", s
        assert not s["countClipped"] and s["boxWidth"] >= 120, f"count cut or search box squeezed: {s}"
    assert set(seen[:n]) == want, (seen, want)
    back = session["search-back"]
    assert tuple(back["selected"]) == seen[(4 - 1) % n]
    assert back["count"] == f"{(4 - 1) % n + 1} / {n} in {m} graphs"


# the minimap's box on screen, and how many drawn nodes / collapsed groups it covers
MINIMAP = """() => {
  const root = document.querySelector('#nstviz-root');
  const m = [...root.querySelectorAll('.nsv-minimap')].find((x) => x.offsetParent);
  const btn = root.querySelector('button[data-action="minimap"]');
  const out = {shown: !!m, button: btn ? btn.getAttribute('aria-pressed') : null, covered: 0, drawn: 0};
  const r = m ? m.getBoundingClientRect() : null;
  const p = root.__nstviz.panes()[0];
  const c = root.querySelector('.nsv-canvas').getBoundingClientRect();
  const {k, tx, ty} = p.camera;
  for (const b of [...p.nodes, ...p.groups.filter((g) => !g.expanded)]) {
    const x0 = c.left + b.x * k + tx, y0 = c.top + b.y * k + ty, x1 = x0 + b.w * k, y1 = y0 + b.h * k;
    if (x1 < c.left || y1 < c.top || x0 > c.right || y0 > c.bottom) continue;
    out.drawn++;
    if (r && x1 > r.left && x0 < r.right && y1 > r.top && y0 < r.bottom) out.covered++;
  }
  return out;
}"""


def _wide_report():
    """The training-step fixture with its nonstrict ATen forward made a wide grid (30 chains of
    20 ops): fitted, it fills the pane to the corner where the minimap sits."""
    from nstviz.report import Report

    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    nodes: list[dict[str, Any]] = []
    for c in range(30):
        nodes.append({"name": f"x{c}", "op": "placeholder", "target": f"x{c}", "inputs": [], "region": None})
        prev = f"x{c}"
        for j in range(20):
            nodes.append({"name": f"c{c}_{j}", "op": "call_function", "target": "aten.relu.default", "inputs": [prev], "region": None})
            prev = f"c{c}_{j}"
    nodes.append({"name": "output", "op": "output", "target": "output", "inputs": [f"c{c}_19" for c in range(30)], "region": None})
    graph = next(g for g in data["runs"]["nonstrict"]["graphs"] if g["id"] == "0/0_1:aten_forward")
    graph["nodes"], graph["op_count"] = nodes, 600
    return Report.from_json(json.dumps(data))


CAMERA = "() => ({...document.querySelector('#nstviz-root').__nstviz.panes()[0].camera, scrollY})"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_minimap_hides_and_never_covers_the_fitted_graph_and_the_wheel_pans_the_page_that_fits(size, tmp_path) -> None:
    _need_bundle()
    from nstviz.render.html import render_html

    page = tmp_path / "wide.html"
    page.write_text(render_html(_wide_report()), encoding="utf-8")
    toggle = {"do": "click", "selector": '#nstviz-root button[data-action="minimap"]', "settle_ms": 150}
    fit = {"do": "click", "selector": '#nstviz-root button[title="fit to view (0)"]', "settle_ms": 250}
    steps = [
        {"do": "ready"},
        {"do": "eval", "js": MINIMAP},  # 1: a big view, not fitted: the map is there
        fit, {"do": "eval", "js": MINIMAP},  # 3: fitted: covers nothing
        {"do": "screenshot", "path": str(ARTIFACTS / f"panes-minimap-fit-{size[0]}x{size[1]}.png")},
        {"do": "eval", "js": "() => document.querySelector('#nstviz-root .nsv-canvas').focus()"}, {"do": "wait", "ms": 20},
        {"do": "press", "key": "h", "settle_ms": 200}, {"do": "eval", "js": MINIMAP},  # 8: home view again
        toggle, {"do": "eval", "js": MINIMAP},  # 10: hidden by the toggle
        *_mode("side_by_side"), *_mode("single"), {"do": "eval", "js": MINIMAP},  # 17: still hidden
        toggle, {"do": "eval", "js": MINIMAP},  # 19: back
        {"do": "eval", "js": CAMERA},  # 20
        {"do": "mouse", "moves": [["move", size[0] - 350, 500], ["wheel", 0, 200]]},
        {"do": "wait", "ms": 150}, {"do": "eval", "js": CAMERA},  # 23: the page fits: a plain wheel pans the graph
    ]
    out = _run({"page": str(page), "viewport": list(size), "steps": steps}, tmp_path)["results"]
    assert out[1]["shown"] and out[1]["button"] == "true", out[1]
    assert out[3]["drawn"] > 20 and out[3]["covered"] == 0, f"the minimap covers {out[3]['covered']} boxes of the fitted graph"
    assert out[8]["shown"], out[8]
    assert not out[10]["shown"] and out[10]["button"] == "false", out[10]
    assert not out[17]["shown"] and out[17]["button"] == "false", "the hidden minimap came back after a mode switch"
    assert out[19]["shown"] and out[19]["button"] == "true", out[19]
    assert out[23]["ty"] < out[20]["ty"] - 100 and out[23]["scrollY"] == 0, (out[20], out[23])


def test_the_first_view_follows_the_window_until_the_camera_is_moved(tmp_path) -> None:
    """A page laid out late (a loaded machine, a widget shown in a narrow cell, then widened)
    gets the same first view as one opened at that size; once the person has panned, a resize
    leaves their camera where they put it."""
    cam = "() => document.querySelector('#nstviz-root').__nstviz.panes()[0].camera"
    big, small = (1500, 950), (760, 700)
    opened_big = _run({"page": str(_fixture_page(tmp_path)), "viewport": list(big), "steps": [{"do": "ready"}, {"do": "eval", "js": cam}]}, tmp_path)
    steps = [
        {"do": "ready"}, {"do": "eval", "js": cam},  # 1: the first view at the small size
        {"do": "viewport", "size": list(big)}, {"do": "eval", "js": cam},  # 3: widened
        {"do": "mouse", "moves": [["move", 1000, 500], ["down"], ["move", 1030, 520], ["move", 1060, 540], ["up"]]},
        {"do": "wait", "ms": 100}, {"do": "eval", "js": cam},  # 6: panned by hand
        {"do": "viewport", "size": list(small)}, {"do": "eval", "js": cam},  # 8: narrowed again
    ]
    out = _run({"page": str(_fixture_page(tmp_path)), "viewport": list(small), "steps": steps}, tmp_path)["results"]
    want = opened_big["results"][1]
    assert all(abs(out[3][c] - want[c]) < 1 for c in ("k", "tx", "ty")), f"widened {out[3]}, opened wide {want}, opened small {out[1]}"
    assert out[6] != out[3], "the drag did not move the camera"
    assert out[8] == out[6], f"a resize moved the camera the person had placed: {out[6]} -> {out[8]}"


def _fixture_page(tmp_path: Path) -> Path:
    """FIXTURE as a standalone page, written once per test."""
    page = tmp_path / "training_step.html"
    if not page.exists():
        _need_bundle()
        from nstviz.render.html import render_html
        from nstviz.report import Report

        page.write_text(render_html(Report.from_json(FIXTURE.read_text(encoding="utf-8"))), encoding="utf-8")
    return page
