"""Fixtures for real-browser tests: a JupyterLab server in a temp dir and Debian's Chromium.

The server runs on 127.0.0.1 with a random token and its own config, runtime, settings and
workspace folders (so nothing of the user's Jupyter setup is read or changed); it is stopped
with its whole process group. Chromium is the Debian package driven by Python Playwright
(never ``playwright install``: nothing is downloaded).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.chromium import ChromiumMissing, launch

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"


@dataclass
class JupyterServer:
    """A running Jupyter server: where it listens and where its files are."""

    url: str
    token: str
    root: Path
    runtime_dir: Path
    log: Path
    process: subprocess.Popen
    env: dict[str, str]

    def kernel_connection_file(self, kernel_id: str) -> Path:
        return self.runtime_dir / f"kernel-{kernel_id}.json"

    def trust(self, notebook: Path) -> None:
        """Sign a notebook as this server's user would (``jupyter trust``)."""
        subprocess.run(
            [sys.executable, "-m", "jupyter", "trust", str(notebook)],
            env=self.env,
            check=True,
            capture_output=True,
        )

    def shutdown_sessions(self) -> None:
        """Stop every notebook session and its kernel (REST ``DELETE /api/sessions/<id>``)."""
        for session in self.api("/api/sessions"):  # type: ignore[union-attr]
            req = urllib.request.Request(
                f"{self.url}/api/sessions/{session['id']}?token={self.token}", method="DELETE"
            )
            urllib.request.urlopen(req, timeout=15).close()

    def api(self, path: str) -> object:
        with urllib.request.urlopen(f"{self.url}{path}?token={self.token}", timeout=5) as resp:
            return json.loads(resp.read())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(app: str, root: Path, home: Path, timeout: float = 60.0) -> JupyterServer:
    """Start ``jupyter lab`` or ``jupyter notebook`` (``app``) serving ``root``."""
    port, token = _free_port(), secrets.token_hex(16)
    dirs = {name: home / name for name in ("config", "runtime", "settings", "workspaces", "data")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    notify = dirs["settings"] / "@jupyterlab" / "apputils-extension"
    notify.mkdir(parents=True, exist_ok=True)
    (notify / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    # save widget state with the notebook (JupyterLab's default is not to), as users who want
    # saved notebooks to reopen showing the view do
    widgets = dirs["settings"] / "@jupyter-widgets" / "jupyterlab-manager"
    widgets.mkdir(parents=True, exist_ok=True)
    (widgets / "plugin.jupyterlab-settings").write_text(json.dumps({"saveState": True}))
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_PLATFORM_DIRS": "1",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")])),
    }
    app_class = "LabApp" if app == "lab" else "JupyterNotebookApp"
    cmd = [
        sys.executable, "-m", "jupyter", app, "--no-browser", "--allow-root",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--{app_class}.expose_app_in_browser=True", f"--{app_class}.news_url=None",
        f"--{app_class}.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    log = home / f"jupyter-{app}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=root
        )
    server = JupyterServer(f"http://127.0.0.1:{port}", token, root, dirs["runtime"], log, proc, env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter {app} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            server.api("/api/status")
            return server
        except OSError:
            time.sleep(0.3)
    stop_server(server)
    raise RuntimeError(f"jupyter {app} did not answer within {timeout} s:\n{log.read_text()[-3000:]}")


def stop_server(server: JupyterServer) -> None:
    """Stop the server and its kernels (its own process group only)."""
    try:
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(timeout=15)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=5)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")  # closed after the module: Playwright's sync API keeps an event loop set meanwhile
def browser():
    try:
        with launch() as b:
            yield b
    except ChromiumMissing as exc:
        pytest.fail(str(exc))


def _server_fixture(app: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    root = tmp_path_factory.mktemp(f"{app}-root")
    for nb in (REPO / "notebooks").glob("*.ipynb"):
        shutil.copy(nb, root / nb.name)
    server = start_server(app, root, tmp_path_factory.mktemp(f"{app}-home"))
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from _server_fixture("lab", tmp_path_factory)


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    try:
        import notebook  # noqa: F401
    except ImportError:
        pytest.fail("the notebook package (Notebook 7) is not installed: pip install -e .[test]")
    yield from _server_fixture("notebook", tmp_path_factory)
