"""Open standalone nstviz pages in headless Chromium and report what happened, as JSON.

Runs in its own process (``python page_probe.py SPEC.json``) so that its Playwright instance
never meets another test's (two sync Playwright instances cannot share a process). For each
page it records: requests to anything but ``file:``/``data:``/``blob:``/``about:``, dialogs,
console messages, page errors, CSP violations, whether the viewer became ready
(``data-nstviz-ready="1"``) and how long after navigation that took, the page's text, elements
no page of ours should contain, and, when asked, the downloaded JSON and a screenshot.

SPEC: ``{"pages": [{"path": str, "wait_ready": bool, "download": bool, "screenshot": str|null,
"javascript": bool, "timeout_ms": int, "clicks": [selector], "actions": [[name, selector, *args]],
"text_of": [selector], "download_selector": selector}]}``
(``texts`` in the result maps each ``text_of`` selector to the textContent of its matches).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script (or imported by a benchmark): the repo's tests.*
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.helpers.browser_server import serve
from tests.helpers.chromium import launch

# Runs before the page's own scripts (injected by the browser, so the page's CSP does not apply).
INIT_SCRIPT = """
window.__probe = {violations: [], readyAt: null, start: performance.now()};
document.addEventListener("securitypolicyviolation", (e) => {
  window.__probe.violations.push({directive: e.violatedDirective, blocked: e.blockedURI,
                                  sample: e.sample, line: e.lineNumber});
});
new MutationObserver((_, obs) => {
  if (document.querySelector('[data-nstviz-ready="1"]')) {
    window.__probe.readyAt = performance.now();
    obs.disconnect();
  }
}).observe(document, {subtree: true, childList: true, attributes: true,
                      attributeFilter: ["data-nstviz-ready"]});
"""

COLLECT = """() => ({
  title: document.title,
  text: document.body ? document.body.innerText : "",
  rootChildren: (document.getElementById("nstviz-root") || {childElementCount: 0}).childElementCount,
  pwned: window.__nstviz_pwned || null,
  injected: Array.from(document.querySelectorAll("img[src='x'], [onerror], [onload], iframe, object, embed, base, form"))
               .map((e) => e.outerHTML.slice(0, 200)),
  scripts: document.scripts.length,
  violations: window.__probe.violations,
  readyMs: window.__probe.readyAt,
})"""


def probe(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Open each page and return one observation dict per page."""
    with launch() as browser:
        return [_probe_one(browser, spec) for spec in pages]


def _probe_spec(browser: Any, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """A spec file's pages in a running Chromium (``--serve``)."""
    return [_probe_one(browser, page) for page in spec["pages"]]


def _probe_one(browser: Any, spec: dict[str, Any]) -> dict[str, Any]:
    context = browser.new_context(
        accept_downloads=True,
        java_script_enabled=spec.get("javascript", True),
        viewport={"width": 1280, "height": 900},
    )
    page = context.new_page()
    obs: dict[str, Any] = {"requests": [], "dialogs": [], "console": [], "errors": [], "ready": False}
    page.on(
        "request",
        lambda r: (
            None
            if r.url.split(":", 1)[0] in ("file", "data", "blob", "about")
            else obs["requests"].append(r.url)
        ),
    )
    page.on("dialog", lambda d: (obs["dialogs"].append(d.message), d.dismiss()))
    page.on("console", lambda m: obs["console"].append({"type": m.type, "text": m.text[:500]}))
    page.on("pageerror", lambda e: obs["errors"].append(str(e)[:500]))
    if spec.get("javascript", True):
        page.add_init_script(INIT_SCRIPT)
    url = Path(spec["path"]).resolve().as_uri()
    timeout = spec.get("timeout_ms", 15000)
    t0 = time.perf_counter()
    page.goto(url, wait_until="load")
    if spec.get("wait_ready", True) and spec.get("javascript", True):
        try:
            page.wait_for_selector('[data-nstviz-ready="1"]', state="attached", timeout=timeout)
            obs["ready"] = True
        except Exception as exc:  # recorded, asserted on by the test
            obs["errors"].append(f"not ready after {timeout} ms: {type(exc).__name__}")
    obs["wall_ms"] = (time.perf_counter() - t0) * 1000
    for selector in spec.get("clicks", []):
        page.click(selector, timeout=5000)
    for action, selector, *arg in spec.get(
        "actions", []
    ):  # ["fill", sel, text], ["press", sel, key], ["click", sel]
        getattr(page, action)(selector, *arg, timeout=5000)
    page.wait_for_timeout(spec.get("settle_ms", 300))  # let late handlers (onerror...) fire
    obs["texts"] = {
        sel: page.eval_on_selector_all(sel, "els => els.map(e => e.textContent)")
        for sel in spec.get("text_of", [])
    }
    if spec.get("javascript", True):
        obs.update(page.evaluate(COLLECT))
    else:
        obs.update(
            {"title": page.title(), "text": page.inner_text("body"), "violations": [], "readyMs": None}
        )
    if spec.get("download"):
        with page.expect_download(timeout=10000) as info:
            page.click(spec.get("download_selector", "#nstviz-download-json"))
        download = info.value
        obs["download_name"] = download.suggested_filename
        obs["download_text"] = Path(download.path()).read_text(encoding="utf-8")
    if spec.get("screenshot"):
        page.screenshot(path=spec["screenshot"], full_page=False)
    context.close()
    return obs


def assert_inert(obs: dict[str, Any]) -> None:
    """Nothing ran that we did not write, nothing was fetched, nothing was blocked."""
    assert obs["requests"] == [], f"network requests: {obs['requests']}"
    assert obs["dialogs"] == [], f"dialogs opened: {obs['dialogs']}"
    assert obs.get("pwned") is None, "a hostile string executed"
    assert obs.get("injected", []) == [], f"injected elements: {obs['injected']}"
    assert obs["errors"] == [], f"page errors: {obs['errors']}"
    assert obs["violations"] == [], f"CSP violations: {obs['violations']}"
    errors = [m for m in obs["console"] if m["type"] == "error"]
    assert errors == [], f"console errors: {errors}"


def main() -> None:
    """Read the spec file named on the command line and print the observations as JSON.

    ``--serve`` instead: one Chromium for many spec files (``tests/helpers/browser_server.py``).
    """
    if sys.argv[1] == "--serve":
        serve(_probe_spec)
        return
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    json.dump(probe(spec["pages"]), sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
