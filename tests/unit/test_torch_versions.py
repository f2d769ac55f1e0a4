"""The torch range nstviz declares, and the one line saying a torch is untested.

``_torch_compat.TESTED_TORCH`` is the single list of tested torch releases. The declared
requirement must let pip take the newest torch release (2.15.0, which this machine cannot
install: its metadata is checked instead), and a torch outside the tested list is named once
in ``nstviz --version`` and in every Report's notes (the Report side is checked in
``tests/reliability/test_degradation.py``).
"""

from __future__ import annotations

import io
import pathlib
import tomllib

import pytest
import torch
from packaging.requirements import Requirement
from torch.torch_version import TorchVersion

from nstviz.capture import _torch_compat
from nstviz.cli.main import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _torch_requirement() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (req,) = [Requirement(d) for d in project["dependencies"] if Requirement(d).name == "torch"]
    return req


@pytest.mark.parametrize(
    ("version", "accepted"),
    [("2.12.1", False), ("2.13.0", True), ("2.14.1", True), ("2.15.0", True), ("2.16.0", True)],
)
def test_pip_accepts_the_tested_and_newer_torch(version: str, accepted: bool) -> None:
    assert _torch_requirement().specifier.contains(version) is accepted


def test_the_declared_floor_is_the_oldest_tested_torch() -> None:
    floors = [s.version for s in _torch_requirement().specifier if s.operator == ">="]
    assert floors == [_torch_compat.TESTED_TORCH[0]]


def _version_output() -> str:
    out = io.StringIO()
    assert main(["--version"], stdout=out) == 0
    return out.getvalue()


@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "2.14.1", "2.14.0a0+git1234"])
def test_a_tested_torch_gets_no_line(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch, "__version__", TorchVersion(version))
    assert _torch_compat.untested_torch_note() is None
    assert _version_output().count("\n") == 1


def test_a_newer_torch_is_named_untested_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch, "__version__", TorchVersion("2.15.0"))
    want = (
        "torch 2.15.0 is newer than the versions nstviz is tested with (2.13, 2.14): untested; "
        "a Report's notes name any torch feature nstviz could not use there"
    )
    assert _torch_compat.untested_torch_note() == want
    lines = _version_output().splitlines()
    assert lines[0].startswith("nstviz ") and "(torch 2.15.0," in lines[0]
    assert lines[1:] == [f"note: {want}"]
    monkeypatch.setattr(torch, "__version__", TorchVersion("2.12.0"))
    assert _torch_compat.untested_torch_note().startswith("torch 2.12.0 is older than the versions")


def _fake_wheel(folder: pathlib.Path, name: str, version: str, requires: list[str]) -> None:
    """A wheel holding only metadata: enough for pip's resolver, nothing to install."""
    import zipfile

    dist = f"{name.replace('-', '_')}-{version}"
    meta = "".join(
        [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", *(f"Requires-Dist: {r}\n" for r in requires)]
    )
    with zipfile.ZipFile(folder / f"{dist}-py3-none-any.whl", "w") as whl:
        whl.writestr(f"{dist}.dist-info/METADATA", meta)
        whl.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr(f"{dist}.dist-info/RECORD", "")


def test_pips_resolver_takes_torch_2_15_for_nstviz(tmp_path: pathlib.Path) -> None:
    """pip itself, offline (nothing downloaded): nstviz's declared dependencies, torch 2.12.1/2.14.1/2.15.0 on offer."""
    import json
    import os
    import subprocess
    import sys

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    _fake_wheel(tmp_path, "nstviz", project["version"], project["dependencies"])
    for dep in project["dependencies"]:
        req = Requirement(dep)
        if req.name != "torch":
            floor = next(s.version for s in req.specifier if s.operator == ">=")
            _fake_wheel(tmp_path, req.name, floor, [])
    for version in ("2.12.1", "2.14.1", "2.15.0"):
        _fake_wheel(tmp_path, "torch", version, [])
    # a user's pip: none of this machine's pip configuration (its constraints file caps torch at 2.14.1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {"PIP_CONFIG_FILE": os.devnull}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--find-links", str(tmp_path),
         "--ignore-installed", "--quiet", "--report", "-", "nstviz"],
        capture_output=True, text=True, check=False, timeout=120, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    chosen = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(proc.stdout)["install"]}
    assert chosen["torch"] == "2.15.0"
