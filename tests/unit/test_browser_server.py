"""``tests/helpers/browser_server.py``: one Chromium per test process, each spec in a context of its own.

The viewer and page-probe tests rely on it: what one spec leaves in the browser (storage, a
failed step) must not reach the next, and a failing spec must fail its test with the script's
traceback, as the one-process-per-spec driver did.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import browser_server

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "tests" / "viewer" / "driver.py"


def _spec(tmp_path: Path, name: str, steps: list[dict]) -> Path:
    page = tmp_path / "page.html"
    page.write_text('<html><body><div id="nstviz-root" data-nstviz-ready="1"></div></body></html>', encoding="utf-8")
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"page": str(page), "steps": steps}), encoding="utf-8")
    return path


def test_specs_share_one_server_but_not_their_page_state(tmp_path: Path) -> None:
    store = _spec(tmp_path, "store", [{"do": "eval", "js": "() => { window.name = 'left'; localStorage.setItem('k', 'v'); return 1; }"}])
    read = _spec(tmp_path, "read", [{"do": "eval", "js": "() => [window.name, localStorage.getItem('k')]"}])
    assert browser_server.run_spec(DRIVER, store, 120)["results"] == [1]
    server = browser_server._servers[str(DRIVER)][0]
    assert browser_server.run_spec(DRIVER, read, 120)["results"] == [["", None]]  # a new context
    assert browser_server._servers[str(DRIVER)][0] is server and server.poll() is None


def test_a_failing_spec_fails_with_the_scripts_traceback_and_the_server_goes_on(tmp_path: Path) -> None:
    bad = _spec(tmp_path, "bad", [{"do": "no-such-step"}])
    browser_server.run_spec(DRIVER, _spec(tmp_path, "first", []), 120)
    server = browser_server._servers[str(DRIVER)][0]
    with pytest.raises(AssertionError, match=r"driver\.py failed:(.|\n)*unknown step 'no-such-step'"):
        browser_server.run_spec(DRIVER, bad, 120)
    good = _spec(tmp_path, "good", [{"do": "eval", "js": "1 + 1"}])
    assert browser_server.run_spec(DRIVER, good, 120)["results"] == [2]
    assert browser_server._servers[str(DRIVER)][0] is server  # not restarted
