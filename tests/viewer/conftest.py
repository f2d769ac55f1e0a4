"""Fixtures for the viewer's browser tests: Report pages and a Chromium driver process.

Pages are written by the real ``nstviz.render.html.render_html`` (the standalone file users get).
Chromium is driven by ``driver.py`` in a subprocess, so its Playwright instance never meets
another test module's: one per test process, serving every spec (``tests/helpers/browser_server.py``). Screenshots go to ``test-artifacts/viewer/`` for reviewers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser_server import run_spec
from tests.helpers.chromium import ChromiumMissing, chromium_path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "viewer"
DRIVER = Path(__file__).with_name("driver.py")
sys.path.insert(0, str(REPO / "benchmarks"))

from make_synthetic_report import make_report  # noqa: E402

pytestmark = pytest.mark.browser


def _need_bundle() -> None:
    static = REPO / "nstviz" / "static"
    missing = [f for f in ("viewer.js", "standalone.js", "viewer.css") if not (static / f).is_file()]
    if missing:
        pytest.fail(f"viewer bundle missing ({', '.join(missing)}): run `pip install -e .` or `node js/build.mjs`")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def chromium() -> str:
    try:
        return chromium_path()
    except ChromiumMissing as exc:
        pytest.fail(str(exc))


@pytest.fixture
def drive(tmp_path: Path, chromium: str):
    """Run a driver spec (see driver.py) and return its output."""

    def run(spec: dict[str, Any], timeout: float = 180) -> dict[str, Any]:
        path = tmp_path / f"spec-{len(list(tmp_path.glob('spec-*')))}.json"
        path.write_text(json.dumps(spec), encoding="utf-8")
        return run_spec(DRIVER, path, timeout)  # the worker's one Chromium, a new context per spec

    return run


@pytest.fixture
def write_page(tmp_path: Path):
    """Write a Report (or raw JSON text) as a standalone page; return its path."""
    _need_bundle()
    from nstviz.render.html import render_html

    def write(report, name: str = "report.html", json_text: str | None = None) -> Path:
        page = render_html(report)
        if json_text is not None:  # the JSON as text, as pages before gzip+base64 held it
            start = page.index('<script type="application/gzip" id="nstviz-report"')
            end = page.index("</script>", start)
            page = page[:start] + '<script type="application/json" id="nstviz-report">' + json_text + page[end:]
        target = tmp_path / name
        target.write_bytes(page.encode("utf-8"))
        return target

    return write


@pytest.fixture(scope="session")
def synthetic_2k():
    return make_report(2000)


@pytest.fixture(scope="session")
def real_report_json() -> str:
    """A real captured Report (``nstviz.compare`` on a small module whose helper breaks)."""
    import torch

    import nstviz

    from .test_viewer import Block

    model = torch.nn.Sequential(Block(), Block())
    return nstviz.compare(model, torch.randn(2, 8), nonstrict=[Block.stats]).to_json()
