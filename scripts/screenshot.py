"""Keep ``docs/screenshot.png`` (the README's picture) current, in Debian's Chromium.

Usage::

    python scripts/screenshot.py [-o docs/screenshot.png]              # the widget in JupyterLab
    python scripts/screenshot.py --standalone [--report demo.json]     # the standalone HTML page

Default: starts JupyterLab on 127.0.0.1 in a temp dir (same recipe as the browser tests),
opens ``notebooks/01-seed-example.ipynb``, runs all cells through the Run menu, waits for the
widget (``data-nstviz-ready="1"``), selects the last node inlined from the non-strict region
and saves a screenshot of the cell with its widget.

``--standalone``: runs the built-in example as ``nstviz demo`` does (or loads ``--report``),
writes the standalone HTML report and shoots it with the graphs side by side.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "browser"))

from conftest import start_server, stop_server  # noqa: E402
from test_jupyterlab import HOOK, WIDGET, open_notebook, run_all, wait_done  # noqa: E402

from tests.helpers.chromium import CHROMIUM_ARGS, chromium_path  # noqa: E402

NOTEBOOK = "01-seed-example.ipynb"


def shoot_standalone(out: Path, report_json: str | None) -> None:
    """Screenshot the standalone HTML report of the built-in example (or of ``report_json``)."""
    from playwright.sync_api import sync_playwright

    from nstviz.render.html import save_html
    from nstviz.report import Report

    with tempfile.TemporaryDirectory() as tmp:
        if report_json is None:
            report_json = str(Path(tmp) / "demo.json")
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "nstviz",
                    "demo",
                    "-q",
                    "-o",
                    str(Path(tmp) / "demo.html"),
                    "--json",
                    report_json,
                ],
                check=True,
                cwd=REPO,
                stdout=subprocess.DEVNULL,
            )
        html = save_html(Report.load_json(report_json), Path(tmp) / "shot.html")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 860}, device_scale_factor=1)
            page.goto(Path(html).resolve().as_uri())
            page.wait_for_selector('[data-nstviz-ready="1"]', state="attached", timeout=30000)
            page.click('[data-mode="side_by_side"]')
            page.wait_for_timeout(500)
            page.screenshot(path=str(out))
            browser.close()


def main(argv: list[str] | None = None) -> int:
    """Write the screenshot; return a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(REPO / "docs" / "screenshot.png"), help="PNG to write")
    parser.add_argument("--standalone", action="store_true", help="shoot the standalone HTML report instead")
    parser.add_argument(
        "--report", help="with --standalone: a saved Report JSON instead of running the example"
    )
    args = parser.parse_args(argv)
    exe = chromium_path()
    if exe is None:
        print("error: Debian chromium is not installed; apt-get install -y chromium", file=sys.stderr)
        return 2
    if args.standalone:
        shoot_standalone(Path(args.output), args.report)
        print(args.output)
        return 0
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="nstviz-shot-") as tmp:
        home = Path(tmp)
        root = home / "root"
        root.mkdir()
        (root / NOTEBOOK).write_bytes((REPO / "notebooks" / NOTEBOOK).read_bytes())
        server = start_server("lab", root, home)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
                page, errors = open_notebook(browser, server, "lab/tree", NOTEBOOK)
                page.set_viewport_size({"width": 1280, "height": 1400})
                run_all(page)
                wait_done(page)
                # hide the side bar and file browser so the notebook gets the width
                page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
                time.sleep(0.5)
                cell = page.locator(f".jp-Cell:has({WIDGET})")
                cell.scroll_into_view_if_needed()
                time.sleep(0.5)
                pane = page.evaluate(f"() => {HOOK}.panes()[0]")
                inlined = [n["name"] for n in pane["nodes"] if n["highlighted"]]
                if inlined:
                    point = page.evaluate(f"([n]) => {HOOK}.screenPoint(0, n)", [inlined[-1]])
                    if point:
                        page.mouse.click(point["x"], point["y"])
                page.mouse.move(5, 5)  # no hover card over the graph
                time.sleep(0.5)
                out = Path(args.output)
                out.parent.mkdir(parents=True, exist_ok=True)
                cell.screenshot(path=str(out))
                browser.close()
                if errors:
                    print("page errors:", *errors, sep="\n  ", file=sys.stderr)
                    return 1
        finally:
            stop_server(server)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
