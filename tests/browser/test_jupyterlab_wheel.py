"""The wheel over the graph in a real JupyterLab: it scrolls the notebook, not the graph.

A plain wheel over the canvas must reach the notebook (a person scrolling past the widget);
the graph takes the wheel only with Ctrl/Cmd held, or after a click into the canvas, until the
pointer leaves it. The first wheel it lets through shows a short hint over the canvas. The
notebook shows a fixture Report (no torch compile) above a tall printed output.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.browser.test_jupyterlab import HOOK, WIDGET, open_notebook, run_all, wait_done

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "training_step.report.json"

# the notebook's scroller (the nearest ancestor of the widget that scrolls), its scrollTop,
# the graph's camera and the canvas's centre on screen
STATE_JS = f"""() => {{
  const w = document.querySelector('{WIDGET}');
  let s = w.parentElement;
  while (s && !(s.scrollHeight > s.clientHeight + 10 && /(auto|scroll)/.test(getComputedStyle(s).overflowY))) s = s.parentElement;
  const c = w.querySelector('.nsv-canvas').getBoundingClientRect();
  const hint = w.querySelector('.nsv-wheel-hint');
  return {{scrollTop: s ? Math.round(s.scrollTop) : null, camera: {HOOK}.panes()[0].camera,
    x: c.left + c.width / 2, y: Math.min(Math.max(c.top, 80) + 100, c.bottom - 20), bottom: c.bottom,
    hint: hint && !hint.hidden && hint.offsetParent ? hint.textContent : null}};
}}"""


def _notebook(root: Path) -> str:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    shutil.copy(FIXTURE, root / "wheel.report.json")
    nb = new_notebook(cells=[
        new_code_cell("import pathlib\nfrom nstviz.jupyter.widget import Viewer\n"
                      "Viewer(pathlib.Path('wheel.report.json').read_text())"),
        new_code_cell("print('\\n'.join(f'line {i}' for i in range(300)))"),
    ])  # fmt: skip
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "wheel.ipynb")
    return "wheel.ipynb"


def test_plain_wheel_scrolls_the_notebook_ctrl_wheel_or_a_click_zooms(jupyterlab, browser, artifacts: Path) -> None:
    name = _notebook(jupyterlab.root)
    page, errors = open_notebook(browser, jupyterlab, "lab/tree", name)
    try:
        run_all(page)
        wait_done(page)
        page.wait_for_function(f"() => {HOOK}.panes()[0].nodes.length > 0", timeout=30_000)
        before = page.evaluate(STATE_JS)
        assert before["scrollTop"] is not None, "the notebook does not scroll: the test needs it to"
        page.mouse.move(before["x"], before["y"])
        for _ in range(5):
            page.mouse.wheel(0, 100)
            page.wait_for_timeout(60)
        page.wait_for_timeout(250)
        after = page.evaluate(STATE_JS)
        page.screenshot(path=str(artifacts / "jupyterlab-wheel-hint.png"))
        assert after["scrollTop"] > before["scrollTop"] + 100, f"the notebook did not scroll: {before} -> {after}"
        assert after["camera"] == before["camera"], "a plain wheel moved the graph"
        assert after["hint"] == "Ctrl+wheel to zoom, or click to interact", after

        # Ctrl+wheel zooms the graph, and the notebook stays
        page.mouse.move(after["x"], after["y"])
        page.keyboard.down("Control")
        page.mouse.wheel(0, -100)
        page.keyboard.up("Control")
        page.wait_for_timeout(200)
        zoomed = page.evaluate(STATE_JS)
        assert zoomed["camera"]["k"] > after["camera"]["k"], "Ctrl+wheel did not zoom"
        assert zoomed["scrollTop"] == after["scrollTop"]

        # after a click into the canvas the graph takes the plain wheel, until the pointer leaves
        page.mouse.click(zoomed["x"], zoomed["y"])
        page.mouse.wheel(0, 100)
        page.wait_for_timeout(200)
        active = page.evaluate(STATE_JS)
        assert active["scrollTop"] == zoomed["scrollTop"], "an active canvas let the wheel scroll the notebook"
        assert active["camera"] != zoomed["camera"], "an active canvas ignored the wheel"
        page.mouse.move(active["x"], active["bottom"] + 40)  # out of the canvas
        page.mouse.move(active["x"], active["y"])  # and back in
        page.mouse.wheel(0, 100)
        page.wait_for_timeout(250)
        left = page.evaluate(STATE_JS)
        assert left["scrollTop"] > active["scrollTop"], "leaving the canvas did not give the wheel back to the notebook"
        assert left["camera"] == active["camera"]
        assert errors == []
    finally:
        page.close()
