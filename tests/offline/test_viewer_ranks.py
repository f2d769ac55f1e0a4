"""The viewer's rank picker and cross-rank findings, in real Chromium, on an offline diff page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nstviz.offline.diff import diff_paths
from nstviz.render.html import save_html
from tests.helpers.browser_server import run_spec

pytestmark = pytest.mark.browser

DRIVER = Path(__file__).resolve().parents[1] / "viewer" / "driver.py"
OPTIONS = "() => [...document.querySelectorAll('[data-testid=rank-picker] option')].map(o => o.textContent)"
HEADLINE = "() => document.querySelector('[data-testid=headline]').textContent"
FINDINGS = "() => document.querySelector('[data-testid=findings]').textContent"
BADGE = "() => document.querySelector('.nsv-tab[data-tab=breaks] .nsv-badge').textContent"
PICK_1 = "() => { const s = document.querySelector('[data-testid=rank-picker]'); s.value = '1'; s.dispatchEvent(new Event('change')); return true; }"
RUN_NONSTRICT = "() => { const s = document.querySelector('select[aria-label=run]'); s.value = 'nonstrict'; s.dispatchEvent(new Event('change')); return s.value; }"
LEVEL_FORWARD = "() => { const s = document.querySelector('select[aria-label=level]'); s.value = 'aten_forward'; s.dispatchEvent(new Event('change')); return s.value; }"
LEGEND = "() => document.querySelector('.nsv-legend').textContent"
PICKED = "() => document.querySelector('[data-testid=rank-picker]').value"


def test_rank_picker_switches_rank_and_findings_are_shown(tmp_path: Path, tracelogs: Path) -> None:
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.fail("Debian chromium is not installed (apt-get install chromium)")
    page = tmp_path / "diff.html"
    save_html(diff_paths(tracelogs / "before", tracelogs / "after_diverge"), page)
    steps = [
        {"do": "ready", "timeout_ms": 30000},
        {"do": "eval", "js": OPTIONS},
        {"do": "eval", "js": HEADLINE},
        {"do": "eval", "js": BADGE},
        {"do": "eval", "js": FINDINGS},
        {"do": "eval", "js": PICK_1},
        {"do": "ready", "timeout_ms": 30000},
        {"do": "eval", "js": PICKED},
        {"do": "eval", "js": HEADLINE},
        {"do": "eval", "js": BADGE},
        {"do": "eval", "js": OPTIONS},
        {"do": "eval", "js": RUN_NONSTRICT},
        {"do": "wait", "ms": 300},
        {"do": "ready", "timeout_ms": 30000},
        {"do": "eval", "js": LEVEL_FORWARD},
        {"do": "wait", "ms": 300},
        {"do": "ready", "timeout_ms": 30000},
        {"do": "eval", "js": LEGEND},
    ]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"page": str(page), "viewport": [1300, 800], "color_scheme": "light", "steps": steps}))
    out = run_spec(DRIVER, spec, 180)
    assert out["errors"] == [], out["errors"]
    r = out["results"]
    assert r[1] == ["rank 0", "rank 1 ⚠"]
    assert r[2].startswith("3 breaks → 2") and r[3] == "5"
    assert "after: rank 1 compiled differently from rank 0" in r[4]
    assert "break only on rank 1: train_ddp.py:52 in forward (GB0025)" in r[4]
    assert r[7] == "1"
    assert r[8].startswith("3 breaks → 3") and r[9] == "6"
    assert r[10] == ["rank 0", "rank 1 ⚠"]
    assert (r[11], r[14]) == ("nonstrict", "aten_forward")
    assert "rms_scale: 1 call, 5 inlined nodes (approximate: matched by the call's source line)" in r[17], r[17]
    assert out["requests"] == [] or all(u.startswith(("file:", "data:", "blob:")) for u in out["requests"])
