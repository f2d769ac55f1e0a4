"""Regenerate ``docs/screenshot.png`` (the README's picture) from the built-in example.

Runs the example as ``nstviz demo`` does, writes the standalone HTML report, opens it in
headless Debian Chromium and takes a screenshot of the view with the graphs side by side
(baseline | nonstrict, non-strict regions highlighted).

Usage::

    python scripts/screenshot.py [-o docs/screenshot.png] [--report demo.json]

``--report`` uses a saved Report instead of running the example.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nstviz.html import save_html  # noqa: E402
from nstviz.report import Report  # noqa: E402

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def demo_report(tmp: Path) -> Report:
    """The built-in example's Report, captured now by `nstviz demo` (so stacks start in the example)."""
    target = tmp / "demo.json"
    subprocess.run(
        [sys.executable, "-m", "nstviz", "demo", "-q", "-o", str(tmp / "demo.html"), "--json", str(target)],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return Report.load_json(target)


def shoot(html: Path, out: Path, *, width: int = 1400, height: int = 860) -> None:
    """Open the page and save the screenshot."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
        page.goto(html.resolve().as_uri())
        page.wait_for_selector('[data-nstviz-ready="1"]', state="attached", timeout=30000)
        page.click('[data-mode="side_by_side"]')
        page.wait_for_timeout(500)
        page.screenshot(path=str(out))
        browser.close()


def main() -> None:
    """Parse the options, build the page, take the screenshot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(ROOT / "docs" / "screenshot.png"))
    parser.add_argument("--report", help="a saved Report JSON to show instead of running the example")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = Report.load_json(args.report) if args.report else demo_report(Path(tmp))
        page = save_html(report, Path(tmp) / "shot.html")
        shoot(page, Path(args.output))
    print(args.output)


if __name__ == "__main__":
    main()
