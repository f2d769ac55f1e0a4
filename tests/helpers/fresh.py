"""``python -c``/``python -m`` in a fresh process, without paying torch's import each time.

The paste checks (a recommendation run before the model is built, ``torch._dynamo.explain``
before and after) need a process in which nothing compiled and no test code ran. A new
interpreter spends 6-13 s importing torch and transformers before it runs a line; the tests start
dozens. :func:`run` hands the request to a fork server (``tests/helpers/fresh_server.py``),
started once per test process, that has imported them and nothing else, and forks a child per
request: a clean process for the check, without the import. Use it where the check is about what
the code does in a process of its own; where the interpreter's own start or exit is under test
(``atexit``, import-time state, the CLI), start a real one with :mod:`subprocess`.

torch reads some environment variables once, at import (``TORCH_LOGS``, ``TORCHINDUCTOR_*``,
``TORCHDYNAMO_*``): the server is started with the environment this module saw when imported,
and a request whose torch variables differ from it runs in a real new process instead.
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
from pathlib import Path
from typing import IO

ROOT = str(Path(__file__).resolve().parents[2])

_SERVER_ENV = {**os.environ, "PYTHONPATH": ROOT}
"""The server's environment: this process's at import (collection), before any test set a variable."""
_server: subprocess.Popen[str] | None = None
_server_log: IO[str] | None = None


def _stop() -> None:
    """Close the server's stdin (it exits), or kill its process group if it does not."""
    global _server
    server, _server = _server, None
    if server is None or server.poll() is not None:
        return
    try:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _read_line(server: subprocess.Popen[str], timeout: float, what: list[str]) -> str:
    ready, _, _ = select.select([server.stdout], [], [], timeout)
    if not ready:
        os.killpg(server.pid, signal.SIGKILL)  # the server and the child it forked
        _stop()
        raise subprocess.TimeoutExpired(what, timeout)
    line = server.stdout.readline()  # type: ignore[union-attr]
    if not line:
        log = ""
        if _server_log is not None:
            _server_log.seek(0)
            log = _server_log.read()[-3000:]
        _stop()
        raise RuntimeError(f"the fresh-process server died: {log}")
    return line


_SET_BY_TORCH = frozenset({"TORCHINDUCTOR_CACHE_DIR"})
"""Set by torch itself when unset (to its default, for its subprocesses): the server's children do the same."""


def _torch_env_differs(env: dict[str, str]) -> bool:
    mine, server = ({k: v for k, v in e.items() if k.startswith(("TORCH", "PYTORCH"))} for e in (env, _SERVER_ENV))
    for key in _SET_BY_TORCH - server.keys():
        mine.pop(key, None)
    return mine != server


def _started() -> subprocess.Popen[str]:
    global _server, _server_log
    if _server is not None and _server.poll() is None:
        return _server
    if _server_log is None:
        _server_log = tempfile.TemporaryFile("w+", encoding="utf-8")
    _server = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.fresh_server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=_server_log, text=True, cwd=ROOT, env=_SERVER_ENV, start_new_session=True,
    )
    _read_line(_server, 600, ["fresh_server"])  # its {"ready": true} once the imports are done
    return _server


def run(
    args: list[str], *, input: str | None = None, cwd: str | os.PathLike[str] = ROOT,
    env: dict[str, str] | None = None, timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Like ``subprocess.run([sys.executable, *args], capture_output=True, text=True, ...)``.

    Args:
        args: ``["-c", code, *argv]`` or ``["-m", module, *argv]``.
        input: the process's stdin.
        cwd: its working directory.
        env: its environment (default: this process's, with the repository on ``PYTHONPATH``).
        timeout: seconds; the server is killed and :class:`subprocess.TimeoutExpired` raised after.

    Returns:
        The finished process: ``returncode``, ``stdout``, ``stderr``.
    """
    env = dict(env) if env is not None else {**os.environ, "PYTHONPATH": ROOT}
    if _torch_env_differs(env):  # torch read the server's at import
        return subprocess.run([sys.executable, *args], input=input, capture_output=True, text=True, cwd=cwd,
                              env=env, timeout=timeout, check=False)
    server = _started()
    request = {"args": list(args), "input": input, "cwd": str(cwd), "env": env}
    server.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
    server.stdin.flush()  # type: ignore[union-attr]
    answer = json.loads(_read_line(server, timeout, [sys.executable, *args]))
    return subprocess.CompletedProcess([sys.executable, *args], answer["returncode"], answer["stdout"], answer["stderr"])


atexit.register(_stop)

__all__ = ["run"]
