"""A missing Chromium fails the browser tests everywhere; it never skips them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NO_CHROMIUM_ENV = {**os.environ, "PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(REPO)}
MISSING = "Debian chromium is not installed: apt-get install -y chromium (scripts/test.sh installs it)"


def test_the_shared_launcher_names_what_to_install() -> None:
    code = "from tests.helpers.chromium import launch\nwith launch():\n    pass\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=NO_CHROMIUM_ENV, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.rstrip().splitlines()[-1] == f"tests.helpers.chromium.ChromiumMissing: {MISSING}"


def test_viewer_driver_and_page_probe_fail_without_chromium(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"page": str(tmp_path / "x.html"), "steps": [], "pages": []}), encoding="utf-8")
    for script in (REPO / "tests" / "viewer" / "driver.py", REPO / "tests" / "html" / "page_probe.py"):
        proc = subprocess.run([sys.executable, str(script), str(spec)], cwd=tmp_path, env=NO_CHROMIUM_ENV,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, (script.name, proc.stdout, proc.stderr)
        assert MISSING in proc.stderr, (script.name, proc.stderr)


def test_browser_fixture_fails_the_test_instead_of_skipping(tmp_path: Path) -> None:
    # one test of each browser fixture (JupyterLab's and the viewer's): the whole JupyterLab file
    # also started the Notebook 7 server and erred in five tests for the same failure (15 s -> 8 s)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
           "tests/browser/test_jupyterlab.py::test_notebook_1_in_jupyterlab",
           "tests/viewer/test_viewer.py::test_notebook_cells_are_shown_as_ipython_names_them"]
    proc = subprocess.run(cmd, cwd=REPO, env=NO_CHROMIUM_ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:]
    last = proc.stdout.rstrip().splitlines()[-1]
    assert "skipped" not in last and "passed" not in last, last
    assert MISSING in proc.stdout
