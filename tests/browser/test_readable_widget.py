"""The side panel in a real JupyterLab widget about 670 px wide (the file browser open).

The Report of ``tests/viewer/readable_report.py`` (nine long break reasons, ~45 ``config.*``
outputs) is shown by ``Viewer`` in a notebook; the window is sized so the widget is ~670 px
wide, as it is in a 1500 px window with JupyterLab's file browser open. Measured as a person
sees it (``tests/viewer/test_readable.py`` has the rules): every break reason readable, no
number or header broken mid-word, the side panel beside a usable canvas.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.browser.test_jupyterlab import WIDGET, open_notebook, run_all, wait_done
from tests.viewer.readable_report import readable_report
from tests.viewer.test_readable import BREAKS, CHROME, OPENED, OVERVIEW, SEE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = "from nstviz import Report\nfrom nstviz.jupyter.widget import Viewer\nViewer(Report.load_json('readable.report.json'))"


def test_side_panel_reads_in_a_670px_jupyterlab_widget(jupyterlab, browser, artifacts: Path) -> None:
    (jupyterlab.root / "readable.report.json").write_text(readable_report().to_json(), encoding="utf-8")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, jupyterlab.root / "readable.ipynb")
    page, errors = open_notebook(browser, jupyterlab, "lab/tree", "readable.ipynb")
    try:
        run_all(page)
        wait_done(page)
        width = page.evaluate(f"() => document.querySelector('{WIDGET}').getBoundingClientRect().width")
        page.set_viewport_size({"width": int(1500 - (width - 670)), "height": 950})
        page.wait_for_function(f"() => Math.abs(document.querySelector('{WIDGET}').getBoundingClientRect().width - 670) < 12")
        page.locator(WIDGET).scroll_into_view_if_needed()
        page.evaluate(SEE)
        page.click(f"{WIDGET} .nsv-tab[data-tab=breaks]")
        breaks = page.evaluate(BREAKS)
        page.click(f"{WIDGET} .nsv-break .nsv-break-head")
        opened = page.evaluate(OPENED)
        page.screenshot(path=str(artifacts / "jupyterlab-readable-670.png"))
        page.click(f"{WIDGET} .nsv-tab[data-tab=overview]")
        overview = page.evaluate(OVERVIEW)
        chrome = page.evaluate(CHROME)
    finally:
        page.close()
    assert errors == [], errors
    cut = [r["text"] for r in breaks["rows"] if r["clipped"] or r["broken"]]
    assert breaks["readable"] == len(breaks["rows"]) == 12, cut
    assert opened["readable"] and opened["overflow"] == [], opened
    assert overview["broken"] == [], overview["broken"]
    assert overview["firstOutputs"][:2] == ["return.logits", "return.hidden"]
    assert chrome["cutTabs"] == [] and not chrome["stacked"], chrome
    assert chrome["canvas"][0] >= 300 and chrome["canvas"][1] >= 450, chrome
