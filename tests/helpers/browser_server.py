"""One headless Chromium per test process for the page scripts, instead of one per call.

``tests/viewer/driver.py`` and ``tests/html/page_probe.py`` run in a process of their own (two
sync Playwright instances cannot share one). Started once per call they start Python, Playwright
and Chromium each time; started with ``--serve`` they launch Chromium once and take one spec
file a line on stdin, each run in a new browser context (its own storage, downloads, dialogs),
answering one JSON line: ``{"ok": <what the script prints for that spec>}`` or ``{"error": text}``.

:func:`serve` is the script side; :func:`run_spec` the test side (one server per script and
test process, started on first use, restarted after it died or timed out, stopped at exit).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

_servers: dict[str, tuple[subprocess.Popen[str], IO[str]]] = {}


def serve(handle: Callable[[Any, dict[str, Any]], Any]) -> None:
    """Launch Chromium once, then answer ``handle(browser, spec)`` for each spec path read from stdin."""
    from tests.helpers.chromium import launch

    channel = open(os.dup(1), "w", encoding="utf-8")  # the answers; anything else printed goes to stderr
    os.dup2(2, 1)
    with launch() as browser:
        while line := sys.stdin.readline():
            try:
                spec = json.loads(Path(line.strip()).read_text(encoding="utf-8"))
                answer = {"ok": handle(browser, spec)}
            except Exception:  # the test reads it as the script's failure
                answer = {"error": traceback.format_exc()}
            channel.write(json.dumps(answer, ensure_ascii=True) + "\n")
            channel.flush()


def _stop(script: str) -> None:
    proc, log = _servers.pop(script, (None, None))
    if proc is None:
        return
    if proc.poll() is None:
        try:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if log is not None:
        log.close()


def _stop_all() -> None:
    for script in list(_servers):
        _stop(script)


def _server(script: str) -> subprocess.Popen[str]:
    proc, _ = _servers.get(script, (None, None))
    if proc is not None and proc.poll() is None:
        return proc
    _stop(script)
    log = tempfile.TemporaryFile("w+", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, script, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=log, text=True, start_new_session=True)
    _servers[script] = (proc, log)
    return proc


def _log_tail(script: str) -> str:
    _, log = _servers.get(script, (None, None))
    if log is None:
        return ""
    log.seek(0)
    return log.read()[-4000:]


def run_spec(script: str | os.PathLike[str], spec_path: str | os.PathLike[str], timeout: float) -> Any:
    """What ``python SCRIPT SPEC`` prints (parsed), from the script's long-lived server.

    Args:
        script: ``tests/viewer/driver.py`` or ``tests/html/page_probe.py``.
        spec_path: the spec file.
        timeout: seconds; the server is killed and :class:`subprocess.TimeoutExpired` raised after.

    Raises:
        AssertionError: the script failed on this spec (its traceback), or its server died.
    """
    key = str(script)
    proc = _server(key)
    proc.stdin.write(f"{Path(spec_path).resolve()}\n")  # type: ignore[union-attr]
    proc.stdin.flush()  # type: ignore[union-attr]
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        os.killpg(proc.pid, signal.SIGKILL)  # the script, Playwright's driver and Chromium
        _stop(key)
        raise subprocess.TimeoutExpired([key, str(spec_path)], timeout)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    if not line:
        tail = _log_tail(key)
        _stop(key)
        raise AssertionError(f"{Path(key).name} failed (its server died):\n{tail}")
    answer = json.loads(line)
    if "error" in answer:
        raise AssertionError(f"{Path(key).name} failed:\n{answer['error'][-4000:]}")
    return answer["ok"]


atexit.register(_stop_all)

__all__ = ["run_spec", "serve"]
