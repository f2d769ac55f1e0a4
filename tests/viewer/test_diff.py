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

# every drawn box of every pane lies inside its canvas (CSS px, 1 px slack)
FITTED = f"""{HOOK}.panes().map(p => p.nodes.concat(p.groups).every(b => {{
  const c = p.camera, x0 = b.x * c.k + c.tx, y0 = b.y * c.k + c.ty;
  return x0 >= -1 && y0 >= -1 && x0 + b.w * c.k <= p.canvas.w + 1 && y0 + b.h * c.k <= p.canvas.h + 1;
}}))"""
CAMS = f"{HOOK}.panes().map(p => p.camera)"


def _zoom(pane: int, delta: float) -> str:
    """Ctrl+wheel over the middle of a pane's canvas (zoom at the cursor)."""
    return (f"(() => {{ const c = document.querySelectorAll('.nsv-pane canvas')[{pane}]; const r = c.getBoundingClientRect();"
            f" c.dispatchEvent(new WheelEvent('wheel', {{deltaY: {delta}, ctrlKey: true, clientX: r.left + r.width / 3,"
            " clientY: r.top + r.height / 3, bubbles: true, cancelable: true})); return true; })()")


def _drag(page_xy: tuple[float, float], dx: float, dy: float) -> dict:
    x, y = page_xy
    return {"do": "mouse", "moves": [["move", x, y], ["down"], ["move", x + dx / 2, y + dy / 2], ["move", x + dx, y + dy], ["up"]]}


def _same_change(a0: dict, a1: dict, b0: dict, b1: dict) -> bool:
    """b moved by the same screen-space change (scale about a point, then shift) as a."""
    f = a1["k"] / a0["k"]
    dx, dy = a1["tx"] - f * a0["tx"], a1["ty"] - f * a0["ty"]
    return (abs(b1["k"] / b0["k"] - f) < 1e-6 and abs(b1["tx"] - (f * b0["tx"] + dx)) < 0.5
            and abs(b1["ty"] - (f * b0["ty"] + dy)) < 0.5)


def _one_side_only(report: Report, mine: list, theirs: list) -> set[str]:
    """Ops of `mine` with no op of the same target and user stack in `theirs` (the viewer's rule)."""
    keys = {(n.stack, n.target) for g in theirs for n in g.nodes if n.op in OPS and n.stack is not None}
    return {n.name for g in mine for n in g.nodes if n.op in OPS and n.stack is not None and (n.stack, n.target) not in keys}


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.from_json(FIXTURE.read_text(encoding="utf-8"))


def test_side_by_side_stacks_fragments_fits_links_and_marks(report, write_page, drive, artifacts):
    base = [g for g in report.runs["baseline"].graphs if g.level == "dynamo"]
    ns = [g for g in report.runs["nonstrict"].graphs if g.level == "dynamo"]
    assert len(base) == 5 and len(ns) == 1
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
        {"do": "wait_for", "js": f"{HOOK}.panes()[0].camera.k !== {HOOK}.panes()[1].camera.k || true"},
        {"do": "eval", "js": CAMS},                                                # 9
    ]})
    assert out["errors"] == [] and out["requests"] == []
    res = out["results"]
    left, right = res[3]
    assert (left["run"], right["run"]) == ("baseline", "nonstrict")
    # the baseline pane: all five fragments, in the Report's order, four break bands between them
    stack = left["stack"]
    assert stack and [f["graph"] for f in stack["fragments"]] == [g.id for g in base]
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
    # ops on one side only, by target + user stack
    assert {n["name"] for n in right["nodes"] if n["onlyHere"]} == _one_side_only(report, ns, base)
    left_only = {n["name"].split("·", 1)[-1] for n in left["nodes"] if n["onlyHere"]}
    assert left_only == _one_side_only(report, base, ns)
    # linked: zooming the left pane zooms the right one by the same change
    a0, b0 = res[6]
    a1, b1 = res[9]
    assert a1["k"] != a0["k"]
    assert _same_change(a0, a1, b0, b1)

    # drag the right pane: the left follows; unlink: it does not; the choice stays in the store
    out = drive({"page": str(page), "viewport": [1500, 950], "steps": [
        {"do": "ready"}, SIDE, {"do": "ready"},
        {"do": "eval", "js": "(() => { const r = document.querySelectorAll('.nsv-pane canvas')[1].getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height - 30]; })()"},
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
        # a band is a break: clicking it selects that break and keeps the diff on screen
        {"do": "click_node", "pane": 0, "name": first["name"]},
        {"do": "ready"},
        {"do": "eval", "js": f"[{HOOK}.state().selectedBreak, {HOOK}.mode(), {HOOK}.panes()[0].stack !== null]"},
    ]})
    assert out["errors"] == []
    res = out["results"]
    a1, b1 = res[4]
    assert b1["tx"] != b0["tx"] and _same_change(b0, b1, a0, a1), "the left pane followed the drag"
    assert res[6] == [False, "false"]
    a2, b2 = res[8]
    assert b2["tx"] != b1["tx"] and a2 == a1, "unlinked: the left pane stays"
    assert res[11] == [{"run": "baseline", "index": 0}, "side_by_side", True]


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
