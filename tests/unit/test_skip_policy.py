"""scripts/test.sh's skip policy: with NSTVIZ_STRICT_SKIPS=1 an undeclared skip fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

TESTS = '''
import pytest

def test_passes():
    pass

def test_skipped():
    pytest.skip("no widget factory here")
'''


def _pytest(tmp_path: Path, strict: bool, allow: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "allow.txt").write_text("# none\n" + allow, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "NSTVIZ_EXPECTED_SKIPS": str(tmp_path / "allow.txt")}
    env.pop("NSTVIZ_STRICT_SKIPS", None)
    if strict:
        env["NSTVIZ_STRICT_SKIPS"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "tests.conftest",
           "-c", str(tmp_path / "pytest.ini"), str(tmp_path / "test_sample.py")]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_undeclared_skip_fails_the_strict_run(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, strict=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "UNEXPECTED SKIP test_sample.py::test_skipped: no widget factory here" in proc.stdout, proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("1 passed, 1 skipped"), proc.stdout


def test_declared_skip_passes_the_strict_run(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, strict=True, allow="*::test_skipped | no widget factory\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "UNEXPECTED SKIP" not in proc.stdout


def test_skip_declared_for_another_reason_still_fails(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, strict=True, allow="*::test_skipped | chromium is missing\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_without_strict_mode_a_skip_is_only_reported(tmp_path: Path) -> None:
    proc = _pytest(tmp_path, strict=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SKIPPED [1] test_sample.py:8: no widget factory here" in proc.stdout, proc.stdout
