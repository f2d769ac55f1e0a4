"""The fork server behind :func:`tests.helpers.fresh.run` (``python -m tests.helpers.fresh_server``).

It imports torch (Dynamo, AOTAutograd, inductor's entry), numpy and transformers once (the
~6-13 s every new interpreter spends before it runs a line of the test's code), runs nothing
else, then reads one JSON request a line from stdin: ``{"args": ["-c", code, ...] | ["-m", module, ...], "input": str | None, "cwd": str,
"env": {...}}``. For each it forks a child that takes the request's cwd, environment, argv and
stdin, runs the code as ``__main__`` (as ``python -c``/``python -m`` would), runs the ``atexit``
callbacks and exits; the server answers one JSON line ``{"returncode", "stdout", "stderr"}``.

A child starts from an interpreter in which no torch op ran, nothing compiled and no test code
ran: what a fresh process is for these checks, minus the imports. nstviz itself is not imported
here (some checks run pasted code with no nstviz in the process).
"""

from __future__ import annotations

import atexit
import builtins
import gc
import importlib
import io
import json
import os
import runpy
import sys
import tempfile
import traceback
import types
import weakref

from tests.helpers.gc_setting import collect_less_often

PRELOAD = (
    "numpy", "torch", "torch._dynamo", "torch._functorch.aot_autograd", "torch._inductor.compile_fx",
    "transformers", "transformers.modeling_utils",
)
"""Imports only: none of them compiles, runs an op or starts a thread or process."""


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _run_child(request: dict, out_path: str, err_path: str, channel: int) -> None:
    """In the forked child: run the request as ``python <args>`` would, then exit (never returns)."""
    code = 1
    try:
        os.close(channel)
        atexit._clear()  # the server's callbacks are the server's; the child runs its own at exit
        weakref.finalize._registered_with_atexit = False  # type: ignore[attr-defined]
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(out_path, os.O_WRONLY), 1)
        os.dup2(os.open(err_path, os.O_WRONLY), 2)
        sys.stdin = io.StringIO(request.get("input") or "")
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        flag, target, *argv = request["args"]
        try:
            if flag == "-c":
                main = types.ModuleType("__main__")
                main.__dict__["__builtins__"] = builtins
                sys.modules["__main__"] = main
                sys.argv = ["-c", *argv]
                exec(compile(target, "<string>", "exec"), main.__dict__)
            elif flag == "-m":
                sys.argv = [target, *argv]
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:
                raise ValueError(f"fresh_server runs `-c CODE` or `-m MODULE`, got {flag!r}")
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()  # what the end of a fresh interpreter runs
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # exiting anyway
                pass
        os._exit(code)


def _serve(request: dict, channel: io.TextIOWrapper) -> None:
    paths = []
    for name in ("out", "err"):
        fd, path = tempfile.mkstemp(prefix=f"nstviz-fresh-{name}-")
        os.close(fd)
        paths.append(path)
    out_path, err_path = paths
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run_child(request, out_path, err_path, channel.fileno())
        _, status = os.waitpid(pid, 0)
        with open(out_path, encoding="utf-8", errors="replace") as out, open(err_path, encoding="utf-8", errors="replace") as err:
            answer = {"returncode": os.waitstatus_to_exitcode(status), "stdout": out.read(), "stderr": err.read()}
    finally:
        for path in paths:
            os.unlink(path)
    channel.write(json.dumps(answer) + "\n")
    channel.flush()


def main() -> None:
    """Preload, then serve requests until stdin closes."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    # the imports' objects live as long as the server: no child's collection walks (and copies) them
    gc.collect()
    gc.freeze()
    collect_less_often()
    channel = open(os.dup(1), "w", encoding="utf-8")  # the answers, for as long as the server lives
    os.dup2(2, 1)  # anything printed by the server itself stays off the answer channel
    channel.write(json.dumps({"ready": True}) + "\n")
    channel.flush()
    while line := sys.stdin.readline():
        _serve(json.loads(line), channel)


if __name__ == "__main__":
    main()
