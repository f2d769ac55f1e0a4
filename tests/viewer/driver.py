"""Drive the nstviz viewer in headless Chromium and report what happened, as JSON.

Runs in its own process (``python driver.py SPEC.json``) so its Playwright instance never
meets another test's (two sync Playwright instances cannot share a process). Used by the
viewer tests and by ``benchmarks/bench_viewer.py``.

SPEC: ``{"page": str (file path), "viewport": [w, h], "color_scheme": "light"|"dark",
"wait_until": "load"|"commit" (navigation, default "load"),
"steps": [{"do": ..., ...}]}``. Steps (each result is appended to the output list):

- ``{"do": "ready", "timeout_ms": int}``: wait for ``data-nstviz-ready="1"``; returns ms.
  With ``"quiet": true``: the page's first ready only, waited for without running anything in
  the page (the benchmarks' load time; pair it with the spec's ``"wait_until": "commit"``).
- ``{"do": "eval", "js": str}``: evaluate ``js`` (an expression or arrow fn) and return it.
- ``{"do": "click_node", "pane": int, "name": str}``: click the drawn node/group (by name or
  group key) through the real mouse at its screen point (dragging the graph into view first
  when the point lies outside the pane's canvas); returns the point.
- ``{"do": "click", "selector": str}`` / ``{"do": "fill", "selector": str, "text": str}`` /
  ``{"do": "press", "key": str}``: ordinary Playwright actions.
- ``{"do": "hover_node", "pane": int, "name": str}``: move the mouse over a node.
- ``{"do": "wait_for", "js": str, "timeout_ms": int}``: wait until ``js`` is truthy (use this
  for anything the page does asynchronously; the timeout is a safety net, not a threshold).
- ``{"do": "drag", "selector": str, "dx": int, "dy": int}``: drag the element's centre by (dx, dy)
  with the real mouse, in a few moves.
- ``{"do": "viewport", "size": [w, h]}``: resize the window.
- ``{"do": "screenshot", "path": str}``; ``{"do": "wait", "ms": int}`` (only before asserting
  that something did NOT happen).
Output: ``{"results": [...], "errors": [...page errors...], "console": [...], "requests": [...],
"dialogs": int}``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repo's tests.*

from tests.helpers.browser_server import serve
from tests.helpers.chromium import launch

READY_MARKER = "__nstviz_first_ready__"
"""Logged by INIT_SCRIPT when the viewer first sets ``data-nstviz-ready="1"`` (not in the output's console)."""

# Installed before the page's scripts: long-task observer for the benchmarks.
INIT_SCRIPT = """
window.__bench = {longTasks: [], start: performance.now()};
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench.longTasks.push({start: e.startTime, duration: e.duration});
  }).observe({type: "longtask", buffered: true});
} catch (e) {}
new MutationObserver((muts) => {
  for (const m of muts) {
    if (m.target.getAttribute && m.target.getAttribute("data-nstviz-ready") === "1" && window.__bench.readyAt == null) {
      window.__bench.readyAt = performance.now();
      console.debug(READY_MARKER);
    }
  }
}).observe(document, {attributes: true, subtree: true, attributeFilter: ["data-nstviz-ready"]});
""".replace("READY_MARKER", repr(READY_MARKER))

ROOT = "#nstviz-root"


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the spec in a Chromium of its own."""
    with launch() as browser:
        return run_in(browser, spec)


def run_in(browser: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """Run the spec in a new context (its own storage and downloads) of a running Chromium."""
    out: dict[str, Any] = {"results": [], "errors": [], "console": [], "requests": [], "dialogs": 0}
    w, h = spec.get("viewport", [1400, 900])
    ctx = browser.new_context(viewport={"width": w, "height": h}, color_scheme=spec.get("color_scheme", "light"),
                              accept_downloads=True, device_scale_factor=spec.get("dpr", 1))
    try:
        page = ctx.new_page()
        page.add_init_script(INIT_SCRIPT)
        page.on("pageerror", lambda e: out["errors"].append(f"{e}\n{e.stack or ''}"))
        first_ready: list[bool] = []

        def on_console(m):
            if m.text == READY_MARKER:
                first_ready.append(True)
            else:
                out["console"].append(f"{m.type}: {m.text}")

        page.on("console", on_console)

        def on_dialog(d):
            out["dialogs"] += 1
            d.dismiss()

        page.on("dialog", on_dialog)
        page.on("request", lambda r: None if r.url.split(":", 1)[0] in ("file", "data", "blob", "about") else out["requests"].append(r.url))
        page.goto(Path(spec["page"]).resolve().as_uri(), wait_until=spec.get("wait_until", "load"))
        for step in spec["steps"]:
            if step["do"] == "ready" and step.get("quiet"):
                out["results"].append(_quiet_ready(page, first_ready, step.get("timeout_ms", 30000)))
            else:
                out["results"].append(_step(page, step))
    finally:
        ctx.close()
    return out


def _quiet_ready(page, first_ready: list[bool], timeout_ms: int) -> float:
    """Wait for the viewer's first ready without running anything in the page meanwhile.

    ``wait_for_selector`` injects Playwright's script into the page and polls it: on the page's
    own main thread, during the load it measures (measured: 40-60 ms of a 10k-node page's
    ~300). This waits for INIT_SCRIPT's console message instead, then reads the time.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while not first_ready:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the viewer did not become ready within {timeout_ms} ms")
        page.wait_for_timeout(10)
    return page.evaluate("window.__bench.readyAt")


def _step(page, step: dict[str, Any]) -> Any:
    do = step["do"]
    if do == "ready":
        page.wait_for_selector(f'{ROOT}[data-nstviz-ready="1"]', timeout=step.get("timeout_ms", 30000), state="attached")
        return page.evaluate("window.__bench.readyAt ?? performance.now()")
    if do == "eval":
        return page.evaluate(step["js"], step["arg"]) if "arg" in step else page.evaluate(step["js"])
    if do in ("click_node", "hover_node", "dblclick_node"):
        pt = page.evaluate(
            "([k, n]) => document.querySelector('#nstviz-root').__nstviz.screenPoint(k, n)",
            [step.get("pane", 0), step["name"]],
        )
        if pt is None:
            return None
        if not pt.get("inside", True):
            # off the pane's canvas: drag the graph until it is in view, as a person would
            c = page.evaluate(
                "(k) => { const r = document.querySelector('#nstviz-root').__nstviz.canvasRect(k);"
                " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }",
                step.get("pane", 0),
            )
            page.mouse.move(c["x"], c["y"])
            page.mouse.down()
            page.mouse.move(c["x"] + (c["x"] - pt["x"]), c["y"] + (c["y"] - pt["y"]), steps=8)
            page.mouse.up()
            pt = page.evaluate(
                "([k, n]) => document.querySelector('#nstviz-root').__nstviz.screenPoint(k, n)",
                [step.get("pane", 0), step["name"]],
            )
        # what a person's pointer would land on there (a pane overlay would take the click)
        pt["at"] = page.evaluate(
            "([x, y]) => { const e = document.elementFromPoint(x, y); return e ? `${e.tagName.toLowerCase()}.${e.className}` : null; }",
            [pt["x"], pt["y"]],
        )
        if do == "click_node":
            page.mouse.click(pt["x"], pt["y"])
            try:  # the selection is synchronous; a loaded machine may still need a frame or two
                page.wait_for_function(
                    "() => Object.keys(document.querySelector('#nstviz-root').__nstviz.state().selectedNode || {}).length > 0",
                    timeout=step.get("select_timeout_ms", 2000),
                )
            except Exception:  # reported through the step's result: the test decides
                pt["selected"] = False
            else:
                pt["selected"] = True
            pt["pane"] = page.evaluate("(k) => document.querySelector('#nstviz-root').__nstviz.panes()[k]", step.get("pane", 0))
        elif do == "dblclick_node":
            page.mouse.dblclick(pt["x"], pt["y"])
        else:
            page.mouse.move(pt["x"], pt["y"])
        page.wait_for_timeout(step.get("settle_ms", 80))
        return pt
    if do == "click":
        page.click(step["selector"])
        page.wait_for_timeout(step.get("settle_ms", 80))
        return True
    if do == "fill":
        page.fill(step["selector"], step["text"])
        page.wait_for_timeout(step.get("settle_ms", 80))
        return True
    if do == "press":
        page.keyboard.press(step["key"])
        page.wait_for_timeout(step.get("settle_ms", 80))
        return True
    if do == "mouse":
        for m in step["moves"]:
            getattr(page.mouse, m[0])(*m[1:])
        return True
    if do == "drag":
        box = page.locator(step["selector"]).bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + step.get("dx", 0), y + step.get("dy", 0), steps=5)
        page.mouse.up()
        page.wait_for_timeout(step.get("settle_ms", 80))
        return True
    if do == "screenshot":
        Path(step["path"]).parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=step["path"], full_page=step.get("full_page", False))
        return step["path"]
    if do == "viewport":  # the window resized, as a person drags its corner
        page.set_viewport_size({"width": step["size"][0], "height": step["size"][1]})
        page.wait_for_timeout(step.get("settle_ms", 150))
        return True
    if do == "wait":
        page.wait_for_timeout(step["ms"])
        return True
    if do == "wait_for":  # an event, not a time: wait until the JS expression is truthy
        page.wait_for_function(step["js"], timeout=step.get("timeout_ms", 60000))
        return True
    if do == "download":
        with page.expect_download(timeout=10000) as info:
            page.click(step["selector"])
        target = Path(step["path"])
        info.value.save_as(target)
        return str(target)
    raise ValueError(f"unknown step {do!r}")


def main() -> None:
    if sys.argv[1] == "--serve":  # one Chromium for many specs (tests/helpers/browser_server.py)
        serve(run_in)
        return
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    json.dump(run(spec), sys.stdout)


if __name__ == "__main__":
    main()
