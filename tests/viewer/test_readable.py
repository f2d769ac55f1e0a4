"""The side panel as a person reads it: measured in Chromium, not only present in the DOM.

One Report shaped like the GPT-2 runs of the issue "The view a person sees"
(``readable_report.py``: nine long break reasons, ~45 ``config.*`` outputs before the tensors,
an advisor attempt with breaks of its own, timing) is opened at 1500x950, 1100x800 and 670x800
(a JupyterLab widget with the file browser open is about 670 px wide). Each window size is one
driver session; the tests read its measurements:

- clipping: ``scrollWidth > clientWidth`` on a text box;
- a word broken over lines: a Range over one word giving two client rects on different lines
  (what "6 / . / 5 / 2 / s" and "bas / eli / ne" are);
- a toolbar that wraps: its children on more than one row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser_server import run_spec

from .conftest import DRIVER
from .readable_report import readable_report

pytestmark = pytest.mark.browser

SIZES = {"wide": [1500, 950], "laptop": [1100, 800], "widget": [670, 800]}

# window.__see: the measurements, defined once per page
SEE = r"""() => {
  const q = (s, r = document) => [...r.querySelectorAll(s)];
  const lineH = (el) => { const cs = getComputedStyle(el); const lh = parseFloat(cs.lineHeight); return Number.isFinite(lh) ? lh : parseFloat(cs.fontSize) * 1.4; };
  // words of el's text broken over two lines (one rect per line a word spans); a break after a
  // hyphen ("user-" / "defined") is how text wraps, not a cut word
  const broken = (el) => {
    const out = [];
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const re = /[^\s-]+/g; let m;
      while ((m = re.exec(n.data))) {
        const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (tops.size > 1) out.push(m[0]);
      }
    }
    return out;
  };
  const reason = (el) => {
    const text = el.textContent, lines = Math.max(1, Math.round(el.getBoundingClientRect().height / lineH(el)));
    return { text, clipped: el.scrollWidth > el.clientWidth + 1, perLine: text.length / lines, broken: broken(el) };
  };
  const readable = (r) => !r.clipped && r.broken.length === 0 && r.perLine >= Math.min(r.text.length, 12);
  window.__see = { q, broken, reason, readable, lineH };
}"""

BREAKS = r"""() => {
  const { q, reason, readable } = window.__see;
  const rows = q('.nsv-break-reason').filter((e) => e.offsetParent).map(reason);
  return { rows, readable: rows.filter(readable).length, badge: document.querySelector('.nsv-tab[data-tab=breaks] .nsv-badge').textContent };
}"""

OPENED = r"""() => {
  const { q, reason, readable } = window.__see;
  const row = document.querySelector('.nsv-break.nsv-selected');
  const r = reason(row.querySelector('.nsv-break-reason'));
  const side = document.querySelector('.nsv-side').getBoundingClientRect();
  const overflow = q('.nsv-hints li, .nsv-break-text', row).filter((e) => e.getBoundingClientRect().right > side.right + 1 || e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent);
  return { reason: r, readable: readable(r), overflow };
}"""

OVERVIEW = r"""() => {
  const { q, broken } = window.__see;
  const body = document.querySelector('.nsv-tab-body[data-tab=overview]');
  const cells = q('.nsv-kv dt, .nsv-kv dd, .nsv-table th, .nsv-table td', body).filter((e) => e.offsetParent);
  const bad = cells.map((e) => [e.textContent, broken(e)]).filter(([, b]) => b.length);
  const rows = q('.nsv-outputs tbody tr', body).filter((e) => e.offsetParent);
  return { height: body.scrollHeight, broken: bad, firstOutputs: rows.slice(0, 3).map((r) => r.dataset.path || r.cells[0].textContent), outputRows: rows.length };
}"""

CHROME = r"""() => {
  const tb = document.querySelector('.nsv-toolbar');
  const tops = new Set([...tb.children].filter((c) => c.offsetParent).map((c) => Math.round(c.getBoundingClientRect().top)));
  const bar = document.querySelector('.nsv-tabs').getBoundingClientRect();
  const cut = [...document.querySelectorAll('.nsv-tab')].filter((t) => t.getBoundingClientRect().right > bar.right + 1 || t.scrollWidth > t.clientWidth + 1).map((t) => t.textContent);
  const canvas = document.querySelector('.nsv-pane-body').getBoundingClientRect();
  const side = document.querySelector('.nsv-side').getBoundingClientRect();
  const sel = document.querySelector('.nsv-graph-select');
  const label = sel.options[sel.selectedIndex].textContent;
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = getComputedStyle(sel).font;
  const fn = (window.__fn || '');
  const upTo = label.indexOf(fn) >= 0 ? label.slice(0, label.indexOf(fn) + fn.length) : label;
  return { toolbarRows: tops.size, cutTabs: cut, canvas: [canvas.width, canvas.height], side: [side.width, side.height],
           stacked: side.top >= canvas.bottom - 1, pickerTitle: sel.title, pickerLabel: label,
           fnShows: ctx.measureText(upTo).width <= sel.clientWidth - 24 };
}"""


def _drive(spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    path = tmp / f"spec-{len(list(tmp.glob('spec-*')))}.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    out = run_spec(DRIVER, path, 180)
    assert out["errors"] == [] and out["requests"] == [], out
    return out


@pytest.fixture(scope="module")
def page(tmp_path_factory, chromium) -> Path:
    from nstviz.render.html import render_html

    target = tmp_path_factory.mktemp("readable") / "readable.html"
    target.write_bytes(render_html(readable_report()).encode("utf-8"))
    return target


@pytest.fixture(scope="module")
def seen(page, tmp_path_factory, artifacts) -> dict[str, dict[str, Any]]:
    """What each window size shows, measured once per size."""
    tmp = tmp_path_factory.mktemp("readable-specs")
    out: dict[str, dict[str, Any]] = {}
    fn = readable_report().runs["nonstrict"].graphs[0].function or ""
    for name, size in SIZES.items():
        res = _drive({"page": str(page), "viewport": size, "steps": [
            {"do": "ready"},
            {"do": "eval", "js": SEE},
            {"do": "eval", "js": f"() => {{ window.__fn = {json.dumps(fn)}; }}"},
            {"do": "click", "selector": ".nsv-tab[data-tab=breaks]"},
            {"do": "eval", "js": BREAKS},
            {"do": "click", "selector": ".nsv-break .nsv-break-head"},
            {"do": "eval", "js": OPENED},
            {"do": "screenshot", "path": str(artifacts / f"readable-breaks-{name}.png")},
            {"do": "click", "selector": ".nsv-tab[data-tab=overview]"},
            {"do": "eval", "js": OVERVIEW},
            {"do": "screenshot", "path": str(artifacts / f"readable-overview-{name}.png")},
            {"do": "eval", "js": CHROME},
        ]}, tmp)["results"]
        out[name] = {"breaks": res[4], "opened": res[6], "overview": res[9], "chrome": res[11]}
    return out


@pytest.mark.parametrize("size", list(SIZES))
def test_every_break_reason_reads_in_full(seen, size):
    b = seen[size]["breaks"]
    assert len(b["rows"]) == 12  # 9 baseline + 3 of the advisor's attempt
    cut = [r["text"] for r in b["rows"] if r["clipped"] or r["broken"]]
    assert b["readable"] == len(b["rows"]), f"{size}: {b['readable']}/{len(b['rows'])} readable; cut: {cut}"
    opened = seen[size]["opened"]
    assert opened["readable"], opened["reason"]
    assert opened["overflow"] == [], f"{size}: runs out of the pane: {opened['overflow']}"


@pytest.mark.parametrize("size", list(SIZES))
def test_numbers_and_headers_do_not_break_mid_word(seen, size):
    assert seen[size]["overview"]["broken"] == []


def test_breaks_badge_counts_the_baseline_not_the_attempts(seen):
    assert seen["wide"]["breaks"]["badge"] == "9"


@pytest.mark.parametrize("size", list(SIZES))
def test_output_check_shows_tensors_first_and_overview_is_compact(seen, size):
    ov = seen[size]["overview"]
    assert ov["firstOutputs"][:2] == ["return.logits", "return.hidden"], ov["firstOutputs"]
    assert ov["height"] <= {"wide": 1000, "laptop": 1150, "widget": 1400}[size], ov["height"]  # was 3154, 3725, 2703


@pytest.mark.parametrize("size", ["laptop", "widget"])
def test_narrow_toolbar_one_row_tabs_whole_canvas_usable(seen, size):
    c = seen[size]["chrome"]
    assert c["cutTabs"] == [], c
    if size == "laptop":
        assert c["toolbarRows"] == 1, c
    else:
        # the standalone page fits the 800 px window (test_panes), so the page's own header and the
        # legend share the height with the canvas: 415 px tall here (was 670x278 when stacked)
        assert not c["stacked"] and c["canvas"][0] >= 300 and c["canvas"][1] >= 400, c


@pytest.mark.parametrize("size", list(SIZES))
def test_graph_picker_shows_the_function_name(seen, size):
    c = seen[size]["chrome"]
    assert c["fnShows"], c["pickerLabel"]
    assert c["pickerTitle"] == c["pickerLabel"]


INTERACT = r"""async () => {
  const root = document.querySelector('#nstviz-root');
  const rect = (s) => { const e = root.querySelector(s); return e ? e.getBoundingClientRect() : null; };
  const overlap = (a, b) => a && b && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const out = {};
  // help: beside the toolbar, its own "?" still reachable; Esc closes it
  const ask = root.querySelector('.nsv-toolbar button[aria-label^="keyboard and mouse help"]');
  ask.click();
  await new Promise((r) => setTimeout(r, 50));
  const q = ask.getBoundingClientRect();
  out.helpOpen = !!root.querySelector('.nsv-help');
  out.helpCoversToolbar = overlap(rect('.nsv-help'), rect('.nsv-toolbar'));
  out.askOnTop = ask.contains(document.elementFromPoint(q.left + q.width / 2, q.top + q.height / 2));
  document.activeElement.blur();
  document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
  await new Promise((r) => setTimeout(r, 50));
  out.helpAfterEsc = !!root.querySelector('.nsv-help');
  // advisor: an IMPROVED card's effect is not in the error colour
  root.querySelector('.nsv-tab[data-tab=advisor]').click();
  const card = root.querySelector('.nsv-cand[data-status=improved]');
  const line = [...card.querySelectorAll('div')].find((d) => d.textContent === '9 -> 3 graphs');
  const bad = getComputedStyle(root.querySelector('.nstviz') || root).getPropertyValue('--nsv-bad').trim();
  const probe = document.createElement('span'); probe.style.color = bad; root.appendChild(probe);
  out.improvedColour = line ? getComputedStyle(line).color : null;
  out.badColour = getComputedStyle(probe).color; probe.remove();
  return out;
}"""

FILTERS = r"""async () => {
  const root = document.querySelector('#nstviz-root');
  root.querySelector('.nsv-tab[data-tab=overview]').click();
  const rows = () => [...root.querySelectorAll('.nsv-outputs tbody tr')].filter((e) => e.offsetParent).map((r) => r.dataset.path || r.cells[0].textContent);
  const box = (name) => [...root.querySelectorAll('.nsv-outputs label')].find((l) => l.textContent.includes(name)).querySelector('input');
  const out = { first: rows().length };
  const more = root.querySelector('.nsv-outputs .nsv-out-more');
  out.more = more && more.textContent;
  if (more) more.click();
  out.all = rows().length;
  box('tensors only').click();
  out.tensors = rows();
  box('tensors only').click();
  box('differences only').click();
  out.diffs = rows();
  out.diffText = root.querySelector('.nsv-outputs').textContent;
  box('differences only').click();
  // the advisor's attempts: a column each, shown on demand
  const cols = () => [...root.querySelectorAll('.nsv-counts thead th')].filter((e) => e.offsetParent).map((e) => e.textContent);
  out.columns = cols();
  const toggle = root.querySelector('.nsv-attempts-toggle');
  if (toggle) toggle.click();
  out.columnsShown = cols();
  return out;
}"""

RESIZE = [
    {"do": "eval", "js": "() => document.querySelector('.nsv-side').getBoundingClientRect().width"},
    {"do": "eval", "js": "() => { const h = document.querySelector('.nsv-side-resizer'); return h && [h.getAttribute('role'), h.tabIndex]; }"},
    {"do": "drag", "selector": ".nsv-side-resizer", "dx": 120},
    {"do": "eval", "js": "() => document.querySelector('.nsv-side').getBoundingClientRect().width"},
    {"do": "click", "selector": ".nsv-seg-btn[data-mode=side_by_side]"},
    {"do": "eval", "js": "() => document.querySelector('.nsv-side').getBoundingClientRect().width"},
    {"do": "eval", "js": "() => document.querySelector('.nsv-side-resizer').focus()"},
    {"do": "press", "key": "ArrowLeft"},
    {"do": "press", "key": "ArrowLeft"},
    {"do": "eval", "js": "() => document.querySelector('.nsv-side').getBoundingClientRect().width"},
]


def _guard(js: str) -> str:
    """Run an async measurement; a missing feature comes back as {"error": ...}, not a dead driver."""
    return f"async () => {{ try {{ return await ({js})(); }} catch (e) {{ return {{ error: String(e) }}; }} }}"


@pytest.fixture(scope="module")
def acted(page, tmp_path_factory, artifacts) -> dict[str, Any]:
    """One session at 1500x950: the help box, the advisor, the output filters, the side pane's handle."""
    tmp = tmp_path_factory.mktemp("readable-acted")
    steps: list[dict[str, Any]] = [{"do": "ready"}, {"do": "eval", "js": _guard(INTERACT)}, {"do": "eval", "js": _guard(FILTERS)}]
    out = _drive({"page": str(page), "viewport": SIZES["wide"], "steps": steps}, tmp)["results"]
    res: dict[str, Any] = {"seen": out[1], "filters": out[2]}
    try:
        r = _drive({"page": str(page), "viewport": SIZES["wide"], "steps": [{"do": "ready"}, *RESIZE,
                    {"do": "screenshot", "path": str(artifacts / "readable-resized.png")}]}, tmp)["results"]
        res["resize"] = {"w0": r[1], "handle": r[2], "dragged": r[4], "kept": r[6], "keyed": r[10]}
    except AssertionError as exc:  # no handle to drag
        res["resize"] = {"error": str(exc)[-300:]}
    return res


def test_help_box_leaves_the_toolbar_and_esc_closes_it(acted):
    seen = acted["seen"]
    assert "error" not in seen, seen
    assert seen["helpOpen"] and not seen["helpCoversToolbar"] and seen["askOnTop"], seen
    assert not seen["helpAfterEsc"], "Esc leaves the help box open"


def test_improved_advisor_card_is_not_in_the_error_colour(acted):
    seen = acted["seen"]
    assert seen["improvedColour"] and seen["improvedColour"] != seen["badColour"], seen


def test_output_check_filters(acted):
    f = acted["filters"]
    assert "error" not in f, f
    assert (f["first"], f["more"], f["all"]) == (8, "show all 47", 47), f
    assert f["tensors"] == ["return.logits", "return.hidden"]
    assert f["diffs"] == [] and "no value differs" in f["diffText"]
    assert f["columns"] == ["", "baseline", "nonstrict"] and f["columnsShown"] == ["", "baseline", "nonstrict", "attempt-1"], f


def test_side_pane_resizes_by_mouse_and_keyboard(acted):
    r = acted["resize"]
    assert "error" not in r, r
    assert r["handle"] == ["separator", 0], r
    assert abs(r["dragged"] - (r["w0"] + 120)) <= 4, r
    assert r["kept"] == r["dragged"], "a mode switch lost the side pane's width"
    assert r["keyed"] < r["dragged"] - 10, r
