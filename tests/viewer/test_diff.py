"""Side by side as a two-pane diff, as a person sees it in Chromium.

The baseline run as written compiles several graphs (one per fragment between graph breaks);
the nonstrict run compiles one. Side by side shows the baseline's fragments stacked in order
with a band per graph break between them, against the nonstrict graph; both panes fitted,
pan/zoom linked (with a toggle), ops on one side only marked; usable at a ~670 px width.
One browser session per viewport, on a recorded fixture (no torch compile).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nstviz.report import Report

pytestmark = pytest.mark.browser

HOOK = "document.querySelector('#nstviz-root').__nstviz"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "module_block_break.report.json"
SIDE = {"do": "click", "selector": "button.nsv-seg-btn[data-mode=side_by_side]"}
OPS = ("call_function", "call_method", "call_module")

# Fitted, per pane: no drawn box cut at a side edge, and either every box inside the canvas or
# (a tall graph, at a readable scale, > 0.42: the canvas's label threshold) the top row shown
# from the top, the rest below for panning.
FITTED = f"""{HOOK}.panes().map(p => {{
  const c = p.camera, bs = p.nodes.concat(p.groups);
  const sides = bs.every(b => b.x * c.k + c.tx >= -1 && (b.x + b.w) * c.k + c.tx <= p.canvas.w + 1);
  const top = Math.min(...bs.map(b => b.y * c.k + c.ty));
  const all = bs.every(b => b.y * c.k + c.ty >= -1 && (b.y + b.h) * c.k + c.ty <= p.canvas.h + 1);
  return sides && (all || (top >= 0 && top <= 40 && c.k >= 0.42));
}})"""
CAMS = f"{HOOK}.panes().map(p => p.camera)"


def _zoom(pane: int, delta: float) -> str:
    """Ctrl+wheel over the middle of a pane's canvas (zoom at the cursor)."""
    return (f"(() => {{ const c = document.querySelectorAll('.nsv-pane canvas.nsv-canvas')[{pane}]; const r = c.getBoundingClientRect();"
            f" c.dispatchEvent(new WheelEvent('wheel', {{deltaY: {delta}, ctrlKey: true, clientX: r.left + r.width / 3,"
            " clientY: r.top + r.height / 3, bubbles: true, cancelable: true})); return true; })()")


def _until(js: str, timeout_ms: int = 20000) -> dict:
    """Wait until `js` is truthy, polled in the page (the page's CSP forbids wait_for_function's eval)."""
    return {"do": "eval", "js": f"""new Promise((ok, bad) => {{ const t0 = performance.now(); const f = () => {{
      if ({js}) ok(true); else if (performance.now() - t0 > {timeout_ms}) bad(new Error("timed out: " + {json.dumps(js)}));
      else setTimeout(f, 25); }}; f(); }})"""}


def _drag(page_xy: tuple[float, float], dx: float, dy: float) -> dict:
    x, y = page_xy
    return {"do": "mouse", "moves": [["move", x, y], ["down"], ["move", x + dx / 2, y + dy / 2], ["move", x + dx, y + dy], ["up"]]}


def _same_change(a0: dict, a1: dict, b0: dict, b1: dict) -> bool:
    """b moved by the same screen-space change (scale about a point, then shift) as a."""
    f = a1["k"] / a0["k"]
    dx, dy = a1["tx"] - f * a0["tx"], a1["ty"] - f * a0["ty"]
    return (abs(b1["k"] / b0["k"] - f) < 1e-6 and abs(b1["tx"] - (f * b0["tx"] + dx)) < 0.5
            and abs(b1["ty"] - (f * b0["ty"] + dy)) < 0.5)


def _one_side_only(report: Report, mine: tuple[str, list], theirs: tuple[str, list]) -> set[str]:
    """Ops of `mine` with no op of the same target from the same source line in `theirs`.

    The source line is the innermost frame of the node's user stack (a resume function Dynamo
    made after a break keeps the line of the code it resumes); a node inlined from a non-strict
    function (its stack ends at the call site) also stands for every line of that function.
    """

    def keys(run: str, n) -> set:
        frames = report.stacks[n.stack] if n.stack is not None else ()
        if not frames:
            return set()
        out = {(frames[-1].file, frames[-1].line, n.target)}
        region = next((r for r in report.runs[run].regions if r.id == n.region), None)
        if region is not None and region.line_start is not None:
            out |= {(region.file, ln, n.target) for ln in range(region.line_start, region.line_end + 1)}
        return out

    (run, graphs), (other, others) = mine, theirs
    have = set().union(*(keys(other, n) for g in others for n in g.nodes if n.op in OPS))
    return {n.name for g in graphs for n in g.nodes if n.op in OPS and keys(run, n) and not keys(run, n) & have}


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.from_json(FIXTURE.read_text(encoding="utf-8"))


def test_side_by_side_stacks_fragments_fits_links_and_marks(report, write_page, drive, artifacts):
    page = write_page(report, name="diff.html")
    out = drive({"page": str(page), "viewport": [1500, 950], "steps": [
        {"do": "ready"},
        SIDE,
        {"do": "ready"},
        {"do": "eval", "js": f"{HOOK}.panes()"},                                   # 3
        {"do": "eval", "js": FITTED},                                              # 4
        {"do": "screenshot", "path": str(artifacts / "diff-side-by-side.png")},
        {"do": "eval", "js": CAMS},                                                # 6
        {"do": "eval", "js": _zoom(0, -240)},
        {"do": "wait", "ms": 50},
        {"do": "eval", "js": CAMS},                                                # 9
        # the Dynamo level in one pane: both panes go there; the stack stays
        {"do": "eval", "js": "(() => { const s = document.querySelector('.nsv-pane[data-side=left] select[aria-label=level]');"
                             " s.value = 'dynamo'; s.dispatchEvent(new Event('change')); return true; })()"},
        _until(f"{HOOK}.ready() && {HOOK}.panes().every(p => p.stats.nodes && p.graph.includes('dynamo'))"),
        {"do": "eval", "js": f"{HOOK}.panes()"},                                   # 12
        {"do": "eval", "js": "document.querySelector('[data-testid=diff-legend]') && document.querySelector('[data-testid=diff-legend]').textContent"},
        {"do": "screenshot", "path": str(artifacts / "diff-side-by-side-dynamo.png")},
        # select an op: the other pane brings the same op (same target, same line) to its height
        {"do": "click_node", "pane": 0, "name": "4/0:dynamo·relu"},                # 15
        {"do": "eval", "js": f"[{HOOK}.screenPoint(0, '4/0:dynamo·relu'), {HOOK}.screenPoint(1, 'relu')]"},
    ]})
    assert out["errors"] == [] and out["requests"] == []
    res = out["results"]
    left, right = res[3]
    assert (left["run"], right["run"]) == ("baseline", "nonstrict")
    # the baseline pane: all five fragments at the level shown, in the Report's order, four
    # break bands between them
    stack = left["stack"]
    assert stack, "the baseline pane shows the stacked fragments"
    base = [g for g in report.runs["baseline"].graphs if g.level == stack["level"]]
    ns = [g for g in report.runs["nonstrict"].graphs if g.level == stack["level"]]
    assert len(base) == 5 and len(ns) == 1
    assert [f["graph"] for f in stack["fragments"]] == [g.id for g in base]
    assert len(stack["bands"]) == len(base) - 1
    ys = [f["y"] for f in stack["fragments"]]
    assert ys == sorted(ys), "fragments stacked top to bottom in execution order"
    for k, band in enumerate(stack["bands"]):
        assert ys[k] < band["y"] < ys[k + 1], "each band lies between its two fragments"
    brk = report.runs["baseline"].breaks[0]
    first = stack["bands"][0]
    assert first["break_index"] == 0 and brk.gb_id in first["text"] and f":{brk.location.line}" in first["text"]
    assert right["graph"] == ns[0].id
    # fitted: nothing drawn outside either pane
    assert res[4] == [True, True]
    # ops on one side only, by target + source line: none at the ATen level here (the same ops)
    right_only = {n["name"] for n in right["nodes"] if n["onlyHere"]}
    assert right_only == _one_side_only(report, ("nonstrict", ns), ("baseline", base))
    left_only = {n["name"].split("·", 1)[-1] for n in left["nodes"] if n["onlyHere"]}
    assert left_only == _one_side_only(report, ("baseline", base), ("nonstrict", ns))
    # linked: zooming the left pane zooms the right one by the same change
    a0, b0 = res[6]
    a1, b1 = res[9]
    assert a1["k"] != a0["k"]
    assert _same_change(a0, a1, b0, b1)
    # at the Dynamo level the nonstrict graph calls the marked function opaquely: that call is
    # on its side only, and the function's body ops on the baseline's side only
    left, right = res[12]
    base = [g for g in report.runs["baseline"].graphs if g.level == "dynamo"]
    ns = [g for g in report.runs["nonstrict"].graphs if g.level == "dynamo"]
    assert left["graph"] == "stack:dynamo" and [f["graph"] for f in left["stack"]["fragments"]] == [g.id for g in base]
    assert right["graph"] == ns[0].id
    right_only = {n["name"] for n in right["nodes"] if n["onlyHere"]}
    left_only = {n["name"].split("·", 1)[-1] for n in left["nodes"] if n["onlyHere"]}
    assert right_only and right_only == _one_side_only(report, ("nonstrict", ns), ("baseline", base))
    assert left_only and left_only == _one_side_only(report, ("baseline", base), ("nonstrict", ns))
    assert "this side only" in (res[13] or ""), "the legend says what the mark means"
    assert res[15] is not None
    here, there = res[16]
    assert there["inside"] and abs(here["y"] - there["y"]) < 2, "linked panes align the selected op's counterpart"

    # drag the right pane: the left follows; unlink: it does not; the choice stays in the store
    out = drive({"page": str(page), "viewport": [1500, 950], "steps": [
        {"do": "ready"}, SIDE, {"do": "ready"},
        {"do": "eval", "js": "(() => { const r = document.querySelectorAll('.nsv-pane canvas.nsv-canvas')[1].getBoundingClientRect(); return [r.left + r.width / 3, r.top + r.height / 2]; })()"},
        {"do": "eval", "js": CAMS},                                                # 4
    ]})
    cx, cy = out["results"][3]
    a0, b0 = out["results"][4]
    out = drive({"page": str(page), "viewport": [1500, 950], "steps": [
        {"do": "ready"}, SIDE, {"do": "ready"},
        _drag((cx, cy), 70, -40),
        {"do": "eval", "js": CAMS},                                                # 4
        {"do": "click", "selector": "button[data-testid=link-panes]"},
        {"do": "eval", "js": f"[{HOOK}.state().linkPanes, document.querySelector('button[data-testid=link-panes]').getAttribute('aria-pressed')]"},
        _drag((cx, cy), -50, 30),
        {"do": "eval", "js": CAMS},                                                # 8
        # the toolbar's fit puts both panes back as on entry
        {"do": "click", "selector": "button[title='fit to view (0)']"},
        {"do": "eval", "js": f"[{FITTED}, {CAMS}]"},                                # 10
        # a band is a break: clicking it selects that break and keeps the diff on screen
        {"do": "click_node", "pane": 0, "name": first["name"]},
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.state().selectedBreak, {HOOK}.mode(), {HOOK}.panes()[0].stack !== null]"},  # 13
        # a node of a fragment is named by its own graph (what `w.selected_node` gives Python)
        {"do": "click_node", "pane": 0, "name": "1/0_1:aten_forward·addmm"},
        {"do": "eval", "js": f"[{HOOK}.state().selectedNode, {HOOK}.panes()[1].nodes.filter(n => n.linked).map(n => n.name)]"},
        # an op of the marked function's body: its counterparts were inlined from that function
        {"do": "click", "selector": "button[title='expand all groups']"},
        {"do": "click_node", "pane": 0, "name": "3/0:aten_forward·pow_1"},
        {"do": "eval", "js": f"{HOOK}.panes()[1].nodes.filter(n => n.linked).map(n => n.name)"},  # 18
    ]})
    assert out["errors"] == []
    res = out["results"]
    a1, b1 = res[4]
    assert b1["tx"] != b0["tx"] and _same_change(b0, b1, a0, a1), "the left pane followed the drag"
    assert res[6] == [False, "false"]
    a2, b2 = res[8]
    assert b2["tx"] != b1["tx"] and a2 == a1, "unlinked: the left pane stays"
    fitted, (a3, b3) = res[10]
    assert fitted == [True, True] and (a3, b3) == (a0, b0), "fit: both panes as on entry"
    assert res[13] == [{"run": "baseline", "index": 0}, "side_by_side", True]
    selected, linked = res[15]
    assert selected == {"run": "baseline", "graph": "1/0_1:aten_forward", "node": "addmm", "in": "stack:aten_forward"}
    assert "addmm" in linked, "the same op from the same line is outlined in the other pane"
    assert sorted(res[18]) == ["pow_1", "pow_2", "pow_3"], "one-side-only and the outline use one rule"


@pytest.mark.parametrize("viewport", [[670, 760], [1100, 800]])
def test_side_by_side_is_usable_narrow(viewport, report, write_page, drive, artifacts):
    page = write_page(report, name="diff-narrow.html")
    w, h = viewport
    out = drive({"page": str(page), "viewport": viewport, "steps": [
        {"do": "ready"}, SIDE, {"do": "ready"},
        {"do": "eval", "js": "[...document.querySelectorAll('.nsv-pane')].filter(p => p.offsetParent && p.offsetHeight > 40)"
                             ".map(p => { const r = p.querySelector('.nsv-canvas-host').getBoundingClientRect(); return [r.width, r.height]; })"},
        {"do": "eval", "js": FITTED},
        {"do": "screenshot", "path": str(artifacts / f"diff-{w}x{h}.png")},
    ]})
    assert out["errors"] == []
    sizes, fitted = out["results"][3], out["results"][4]
    assert len(sizes) == 2
    for cw, ch in sizes:
        assert cw >= 250 and ch >= 220, f"a pane of {cw:.0f}x{ch:.0f} px at {w}x{h}: {json.dumps(sizes)}"
    assert fitted == [True, True]
