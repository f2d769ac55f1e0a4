"""The one way tests and benchmarks start Chromium: Debian's binary, headless, never downloaded.

Used by ``tests/browser`` (JupyterLab / Notebook 7), ``tests/viewer/driver.py`` (the viewer
driver, also behind ``benchmarks/bench_viewer.py``), ``tests/html/page_probe.py`` (the page
probe, also behind ``benchmarks/bench_html.py``) and ``tests/fuzz``. A missing Chromium is an
error everywhere (never a skip): the browser tests are what proves the viewer works.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from typing import Any

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

MISSING = "Debian chromium is not installed: apt-get install -y chromium (scripts/test.sh installs it)"


class ChromiumMissing(RuntimeError):
    """Chromium is not installed (see :data:`MISSING`)."""


def chromium_path() -> str:
    """Debian's Chromium binary.

    Raises:
        ChromiumMissing: neither ``chromium`` nor ``chromium-browser`` is on PATH.
    """
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        raise ChromiumMissing(MISSING)
    return exe


@contextlib.contextmanager
def launch(playwright: Any | None = None) -> Iterator[Any]:
    """A headless Chromium ``Browser`` (Playwright), closed on exit.

    Args:
        playwright: a running ``sync_playwright()`` instance; one is started (and stopped) if None.
    """
    exe = chromium_path()
    with contextlib.ExitStack() as stack:
        if playwright is None:
            from playwright.sync_api import sync_playwright

            playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=exe, args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


__all__ = ["CHROMIUM_ARGS", "MISSING", "ChromiumMissing", "chromium_path", "launch"]
