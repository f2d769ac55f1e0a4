"""The skipped-frame verdict as a person sees it in the standalone page (a real Chromium).

The Report is recorded (``fixtures/skipped_frame.report.json``, by ``make_fixtures.py``): no
torch compile here. One driver process per window size.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from nstviz import Report
from nstviz.passes.headline import build_headline
from nstviz.render.html import render_html
from tests.helpers.browser_server import run_spec

pytestmark = pytest.mark.browser

HERE = Path(__file__).parent
DRIVER = HERE.parent / "viewer" / "driver.py"
ARTIFACTS = HERE.parents[1] / "test-artifacts" / "users"

PROBE = """() => {
  const chip = [...document.querySelectorAll('[data-testid=headline] .nsv-hl')]
    .find((c) => c.textContent.startsWith('Dynamo skipped the frame'));
  if (!chip) return {found: false};
  const r = chip.getBoundingClientRect();
  const line = parseFloat(getComputedStyle(chip).lineHeight) || 16;
  return {found: true, text: chip.textContent, visible: chip.offsetParent !== null && r.height > 0,
          clipped: chip.scrollWidth > chip.clientWidth, right: r.right, left: r.left, width: innerWidth,
          lines: r.height / line, tone: chip.className};
}"""


@pytest.mark.parametrize("size", [(1500, 950), (1100, 800), (670, 800)], ids=["1500", "1100", "670"])
def test_the_skipped_frame_is_said_in_the_headline(tmp_path: Path, size: tuple[int, int]):
    report = Report.load_json(HERE / "fixtures" / "skipped_frame.report.json")
    # the headline as the passes make it now from the recorded runs (not as the file stored it)
    headline = build_headline(report.runs, report.counts, report.outputs, nothing_marked=report.headline.nothing_marked)
    report = dataclasses.replace(report, headline=headline)
    page = tmp_path / "skipped.html"
    page.write_text(render_html(report), encoding="utf-8")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"skipped_frame_{size[0]}.png"
    spec = {"page": str(page), "viewport": list(size), "steps": [
        {"do": "ready", "timeout_ms": 30000},
        {"do": "eval", "js": PROBE},
        {"do": "screenshot", "path": str(shot)},
    ]}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    out = run_spec(DRIVER, tmp_path / "spec.json", 180)
    assert not out["errors"] and not out["requests"]
    chip = out["results"][1]
    assert chip["found"], "no headline chip says the frame was skipped"
    assert chip["text"] == "Dynamo skipped the frame running_sum: a break inside a loop (GB7000)"
    assert chip["visible"] and not chip["clipped"]
    assert chip["left"] >= 0 and chip["right"] <= chip["width"], chip  # inside the window, not cut off at its edge
    assert chip["lines"] < 3.2, chip  # at most two lines of text
    assert "nsv-hl-bad" in chip["tone"]
