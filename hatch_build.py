"""Hatchling build hook: builds the JavaScript viewer bundle into ``nstviz/static/``.

Runs ``npm ci`` (or ``npm install`` when there is no lockfile) and ``node js/build.mjs`` in
``js/`` whenever a wheel or an editable install is built, so ``pip install -e .`` on a fresh
clone ships a working viewer. Set ``NSTVIZ_SKIP_JS=1`` to skip it when the bundle is already
built (e.g. an sdist that carries ``nstviz/static``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

_OUTPUTS = ("viewer.js", "standalone.js", "viewer.css")


class JsBuildHook(BuildHookInterface):
    """Build ``nstviz/static/{viewer.js,standalone.js,viewer.css}`` from ``js/src``."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Run npm and esbuild before the files are collected."""
        root = Path(self.root)
        js = root / "js"
        static = root / "nstviz" / "static"
        built = all((static / f).is_file() for f in _OUTPUTS)
        if os.environ.get("NSTVIZ_SKIP_JS") == "1" or not (js / "build.mjs").is_file():
            if not built:
                raise RuntimeError(
                    "nstviz: the viewer bundle (nstviz/static) is missing and cannot be built here "
                    "(no js/build.mjs, or NSTVIZ_SKIP_JS=1)."
                )
            return
        node, npm = shutil.which("node"), shutil.which("npm")
        if not node or not npm:
            raise RuntimeError(
                "nstviz: building the viewer needs Node.js (>= 18) and npm on PATH, and they were not "
                "found. Install them (e.g. `apt-get install nodejs npm`, or from https://nodejs.org) "
                "and run the install again."
            )
        install = [npm, "ci"] if (js / "package-lock.json").is_file() else [npm, "install"]
        install += ["--no-audit", "--no-fund"]
        self._run(install, js, "installing the viewer's npm dependencies")
        self._run([node, "build.mjs"], js, "building the viewer bundle")
        missing = [f for f in _OUTPUTS if not (static / f).is_file()]
        if missing:
            raise RuntimeError(f"nstviz: js/build.mjs ran but did not produce {', '.join(missing)} in nstviz/static")
        build_data.setdefault("artifacts", []).extend(f"nstviz/static/{f}" for f in _OUTPUTS)

    def _run(self, cmd: list[str], cwd: Path, what: str) -> None:
        self.app.display_info(f"nstviz: {what}: {' '.join(cmd)}")
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(
                f"nstviz: {what} failed (exit {proc.returncode}) in {cwd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
            )
