from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser_server import run_spec

PROBE = Path(__file__).with_name("page_probe.py")


def probe_pages(tmp_path: Path, pages: list[dict[str, Any]], timeout: float = 180) -> list[dict[str, Any]]:
    """Open pages in headless Chromium (page_probe.py in a separate process, one per test process)."""
    spec = tmp_path / "probe-spec.json"
    spec.write_text(json.dumps({"pages": pages}), encoding="utf-8")
    return run_spec(PROBE, spec, timeout)


@pytest.fixture
def probe(tmp_path: Path):
    def run(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return probe_pages(tmp_path, pages)

    return run


@pytest.fixture(scope="module")
def probe_batch(tmp_path_factory):
    """Like ``probe``, for tests that run many times (hypothesis): one temp folder per module."""
    folder = tmp_path_factory.mktemp("probe")

    def run(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return probe_pages(folder, pages)

    return run
